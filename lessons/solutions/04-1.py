spec_lab.UNKNOWN_TOOL = spec_lab.INVALID_PARAMS  # the spec's code: the tool name is a bad parameter
