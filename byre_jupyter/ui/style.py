"""The look the live view and the static record share, so the end of a turn changes nothing
but the controls going away (the text reflowed from 28 px to 22 px lines and a left
bar appeared when the widget was replaced). Pure constants."""

from __future__ import annotations

__all__ = ["ACCENT", "RENDERED_CLASS", "TURN_BORDER", "TURN_MARGIN", "TURN_PADDING", "TURN_STYLE"]

ACCENT = "#d97757"
TURN_BORDER = f"3px solid {ACCENT}"
TURN_PADDING = "0.1em 0 0.1em 0.8em"
TURN_MARGIN = "0.3em 0"
#: The left bar of a whole turn, live and static.
TURN_STYLE = f"border-left:{TURN_BORDER};padding:{TURN_PADDING};margin:{TURN_MARGIN}"
#: Jupyter's own class for rendered Markdown and HTML outputs. The static record is shown
#: inside an element of this class; the live view's text is wrapped in one, so both take
#: font, line height and margins from the same stylesheet.
RENDERED_CLASS = "jp-RenderedHTMLCommon"
