"""The series' one visual language: palette, hatching and lane geometry shared by every figure.

Colours are the Okabe-Ito palette (safe for the common colour-vision deficiencies). Every figure
module takes its colours and conventions from here so that notebooks look alike.
"""
from __future__ import annotations

from helpers.engine import params

# Okabe & Ito (2008), "Color Universal Design".
BLUE = "#0072B2"
ORANGE = "#E69F00"
SKY = "#56B4E9"
GREEN = "#009E73"
YELLOW = "#F0E442"
VERMILION = "#D55E00"
PURPLE = "#CC79A7"
BLACK = "#000000"
GREY = "#BBBBBB"
LIGHT = "#F2F2F2"

PALETTE: tuple[str, ...] = (BLUE, ORANGE, GREEN, VERMILION, PURPLE, SKY, YELLOW, BLACK)

# Meanings, used the same way in every figure.
LANE_FILL = SKY            # an ordinary lane holding a defined value
KEEPS_OWN = ORANGE         # a lane whose source fell outside its segment: it keeps its own value
ARROW = BLUE               # a shuffle: from source lane to destination lane
RESULT = GREEN             # the lane(s) holding the final result
INACTIVE = GREY            # inactive lanes (not calling: exited, or elsewhere when it is not known which)
EXITED = GREY              # a lane that has returned from the kernel
ELSEWHERE = "#F7EFA0"      # a lane alive in other code (a pale tint of YELLOW): not calling
NOT_CALLING_TEXT = "–"     # what a lane that does not call shows instead of a value
# Hatching means "undefined" and nothing else, in every figure of the series.
UNDEFINED_HATCH = "////"   # undefined results are hatched and labelled "undef"
UNDEFINED_EDGE = VERMILION
UNDEFINED_HATCH_COLOR = "#F2B99A"  # a pale tint of VERMILION, so the word "undef" stays legible on it
UNDEFINED_TEXT = "#7A2B00"         # dark vermilion, on a white label
OUTSIDE_MASK_STYLE = "--"  # lanes outside the mask are outlined dashed
SEGMENT_BANDS = (LIGHT, "#DDDDDD")  # alternating shading of width segments

FIG_WIDTH = 10.0           # inches: fits the notebook column at DPI
DPI = 100                  # every PNG of the series: "undef" in a lane box stays legible
LANES = params.LANES       # figures_block reads it here; the one definition is helpers.engine.params
