class SpecGateServer(mcp_full.MCPServer):
    """A server whose gate opens when initialize is answered, as the spec allows."""

    def handle(self, message):
        answer = super().handle(message)
        if isinstance(message, dict) and message.get("method") == "initialize" and answer and "result" in answer:
            self._initialized = True  # requests may follow the initialize response at once
        return answer
