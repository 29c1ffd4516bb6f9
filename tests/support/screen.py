"""What the live view's frontend holds: the pieces of ``LiveWidget.changes`` replayed as
ui/live.js applies them (each piece by id, a text's finished blocks in order), so unit tests
read the view as a user would see it without a browser."""

from __future__ import annotations

from typing import Any

from byre_jupyter.ui.live import LiveView


class Screen:
    """Subscribe right after the :class:`LiveView` is made; every change after is replayed."""

    def __init__(self, live: LiveView) -> None:
        self.live = live
        self.pieces: dict[str, dict[str, Any]] = {}
        self.done: dict[str, list[str]] = {}
        #: Every piece sent, in order: what went over the comm.
        self.sent: list[dict[str, Any]] = []
        live.model.observe(self._changed, names="changes")

    def _changed(self, change: dict[str, Any]) -> None:
        for piece in change["new"]["pieces"]:
            self.sent.append(piece)
            if "keep" in piece:  # a change of the growing block: the rest is as it was
                piece = {**self.pieces[piece["id"]], "reset": False, **piece}
            if piece["slot"] == "done":
                if piece["id"] not in self.pieces:
                    self.done.setdefault(piece["parent"], []).append(piece["html"])
            elif piece.get("reset"):
                self.done.pop(piece["id"], None)
                for old in [k for k in self.pieces if k.startswith(f"{piece['id']}/")]:
                    del self.pieces[old]
            if "keep" in piece:  # the growing block: what it keeps of the last, and the rest
                before = self.pieces[piece["id"]]
                assert before["seq"] == piece["base"], "a diff of another version"
                units = before["html"].encode("utf-16-le")  # as JavaScript slices strings
                assert len(units) >= 2 * piece["keep"]
                html = units[: 2 * piece["keep"]].decode("utf-16-le") + piece["add"]
                assert len(html.encode("utf-16-le")) == 2 * piece["size"]
                piece = {k: v for k, v in piece.items() if k not in ("keep", "add")}
                piece["html"] = html
            self.pieces[piece["id"]] = {**piece, "seq": change["new"]["seq"]}

    def text(self, block_id: str) -> str:
        """A text block's HTML as shown: its finished blocks, then the one being written."""
        return "".join(self.done.get(block_id, [])) + self.pieces[block_id]["html"]

    def html(self) -> str:
        """All HTML shown (card bodies, notices, texts)."""
        return "".join(
            self.text(p["id"]) if p["kind"] == "text" else p.get("html", "") + p.get("after", "")
            for p in self.pieces.values()
            if p["slot"] != "done"
        )

    def kids(self, parent: str, slot: str) -> list[dict[str, Any]]:
        return [p for p in self.pieces.values() if p["parent"] == parent and p["slot"] == slot]

    @property
    def bar(self) -> dict[str, Any]:
        return {**self.live.model.menus, **self.live.model.bar}
