class SpecGateServer(mcp_min.MCPServer):
    """A server whose gate opens when initialize is answered, as the spec allows."""

    def _initialize(self, params):
        result = super()._initialize(params)  # a bad initialize raises here: the gate stays shut
        self._initialized = True  # requests may follow the initialize response at once
        return result
