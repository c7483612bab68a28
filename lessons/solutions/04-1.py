mcp_min.UNKNOWN_TOOL = mcp_min.INVALID_PARAMS  # the spec's code: the tool name is a bad parameter
