"""looplab: the parts of the course the notebooks should not have to show.

The notebooks tell the story (a tool call, the loop, id matching, a whole agent); this package
holds the machinery around it: offline replay of the real SDK, the reference calculator, the
history viewer, the checks and the grader.
"""

from .client import MODEL, client, current_mode, traffic
from . import tools
from .transport import NotRecordedError
from .viewer import HistoryViewer, show_history
from .checks import check, hint, progress

__all__ = [
    "MODEL", "HistoryViewer", "NotRecordedError", "check", "client", "current_mode", "hint", "progress",
    "show_history", "tools", "traffic",
]
