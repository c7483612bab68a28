mcp_full.UNKNOWN_TOOL = mcp_full.INVALID_PARAMS  # the spec's code: the tool name is a bad parameter
