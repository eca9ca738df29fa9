"""What writes data/ on the H200 (record, record_diverged, record_reduce, the sanitizer and ncu
targets, allreduce_nccl), the parsing of the tools' output (tool_output), and the machine's proof
against the hardware (proof). Imports engine, machine, topics and bench; nothing imports it but
notebooks' reading of recorded reports.
"""
