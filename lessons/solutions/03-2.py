def connect(wire, speaks: list) -> bool:
    """The handshake, offering speaks[0]; True if the session is live on a version in speaks."""
    answer = wire.send(mcp_min.request(1, "initialize", {**hello, "protocolVersion": speaks[0]}))
    if "result" not in answer or answer["result"]["protocolVersion"] not in speaks:
        return False  # a version this client cannot speak: hang up before the session goes live
    wire.send(mcp_min.notification("notifications/initialized"))
    return True
