class SelfCorrectingServer(mcp_min.MCPServer):
    """Arguments that break a tool's schema come back as an isError result."""

    def _call_tool(self, params):
        try:
            return super()._call_tool(params)
        except mcp_min.RPCError as exc:
            name, arguments = params.get("name"), params.get("arguments", {})
            well_formed = isinstance(name, str) and isinstance(arguments, dict)
            if exc.code != mcp_min.INVALID_PARAMS or not well_formed or name not in self.tools:
                raise  # a malformed request or an unknown tool stays a protocol error
            return {"content": [{"type": "text", "text": f"ERROR: {exc.message}"}], "isError": True}
