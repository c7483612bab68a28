def shape(msg: dict) -> str:
    """The shape of one message: request, notification, response or invalid."""
    if "method" in msg:
        if "id" not in msg:
            return "notification"  # the key is absent: that, and only that, makes a notification
        id = msg["id"]
        valid = isinstance(id, str) or (isinstance(id, int) and not isinstance(id, bool))
        return "request" if valid else "invalid"
    if "id" in msg and ("result" in msg) != ("error" in msg):
        return "response"
    return "invalid"
