def call_with_retry(client, method, params=None, attempts=3):
    """client.request(method, params), tried again after -32603, at most attempts times."""
    for attempt in range(1, attempts + 1):
        try:
            return client.request(method, params)
        except mcp_min.RPCError as exc:
            if exc.code != mcp_min.INTERNAL_ERROR or attempt == attempts:
                raise  # a deliberate error will not change; the last -32603 goes to the caller
