@echo off
rem Warp Lab on native Windows (cmd or PowerShell): warplab.cmd lab, warplab.cmd test, warplab.cmd help.
rem Finds Python (PYTHON, else the py launcher, else python) and runs warplab.py, as ./warplab does elsewhere.
setlocal
if not defined PYTHON (
  where py >nul 2>nul && (set "PYTHON=py -3") || (set "PYTHON=python")
)
%PYTHON% -c "import sys; sys.exit(sys.version_info < (3, 10))" >nul 2>nul
if errorlevel 1 (
  echo warplab: Python 3.10 or newer was not found as "%PYTHON%". Install it from python.org ^(tick "Add python.exe to PATH"^), or set PYTHON to one. 1>&2
  exit /b 1
)
%PYTHON% "%~dp0warplab.py" %*
exit /b %errorlevel%
