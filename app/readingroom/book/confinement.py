"""The one-book rule: a book-agent server started for one book (``mcp BOOK_ID``) serves it only.

The rule lives here and nowhere else: the MCP tools ask it which book a call is about, the
Core asks it before opening a package, listing books or searching the library. A book id it
does not serve is refused as ``BOOK_NOT_ALLOWED`` (docs/book-agent.md), never as a book that
does not exist: the book may well be registered, it is only not served here.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import Code, CoreError

__all__ = ["Confinement"]


@dataclass(frozen=True)
class Confinement:
    """Which books a server serves: every registered one (``served is None``) or one."""

    served: str | None = None

    def allows(self, book_id: str) -> bool:
        """Whether ``book_id`` is served here."""
        return self.served is None or book_id == self.served

    def refusal(self, asked: str | None = None, *,
                remediation: str | None = None) -> CoreError:
        """The BOOK_NOT_ALLOWED error of this server (``asked``: the id that was refused)."""
        details: dict[str, object] = {"served": [self.served]}
        if asked is not None:
            details["asked"] = asked[:64]
        return CoreError(Code.BOOK_NOT_ALLOWED,
                         f"This server serves only the book {self.served!r}.",
                         details=details,
                         remediation=remediation or f"Omit book_id or pass {self.served!r}.")

    def check(self, book_id: str) -> str:
        """``book_id`` when served here.

        Raises:
            CoreError: BOOK_NOT_ALLOWED on a server of another book.
        """
        if not self.allows(book_id):
            raise self.refusal(book_id)
        return book_id

    def book(self, book_id: str | None, *, required: bool = True) -> str | None:
        """The book a call is about: the served one (``book_id`` omitted or the same), or on an
        all-books server the caller's.

        Raises:
            CoreError: BOOK_NOT_ALLOWED for another book on a single-book server;
                INVALID_ARGUMENT when ``book_id`` is ``required`` and an all-books server
                was given none.
        """
        if self.served is not None:
            if book_id is not None:
                self.check(book_id)
            return self.served
        if book_id is None and required:
            raise CoreError(Code.INVALID_ARGUMENT, "book_id is required on this server (it "
                            "serves every registered book).",
                            details={"errors": [{"loc": ["book_id"], "msg": "required"}]},
                            remediation="Take an id from book_list.")
        return book_id
