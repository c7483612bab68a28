hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "careful", "version": "0"}}
LINES = [
    ("→", request(1, "initialize", hello)),
    ("←", response(1, {"protocolVersion": "2025-06-18", "capabilities": {}, "serverInfo": {"name": "s", "version": "0"}})),
    ("→", {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ("→", request(2, "ping")),
    ("←", response(2, {})),
    ("→", request(2, "ping")),  # answered already, yet an id is never used twice in a session
    ("←", response(2, {})),
]
