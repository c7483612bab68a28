def send_or_cancel(transport, message: dict) -> dict:
    """Send a request; if its answer does not come in time, send notifications/cancelled, then raise."""
    try:
        return transport.send(message)
    except TimeoutError:
        # A notification: no id, so the server sends nothing back; it may stop the work and must not answer it.
        transport.send(notification("notifications/cancelled", {"requestId": message["id"], "reason": "timed out"}))
        raise
