def page(items: list, cursor, size: int = 2):
    """The items of the page that starts at cursor, and the cursor of the next page (None on the last)."""
    start = 0
    if cursor is not None:
        # The cursor is opaque to the client; here it is simply the index where the page starts.
        if not (isinstance(cursor, str) and cursor.isdigit() and int(cursor) < len(items)):
            raise RPCError(INVALID_PARAMS, f"invalid cursor: {cursor!r}")
        start = int(cursor)
    end = start + size
    return items[start:end], (str(end) if end < len(items) else None)
