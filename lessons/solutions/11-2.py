# An error response is not a result: call_tool raises, and the tool's words reach the model only as an exception.
# A line that is not JSON is skipped (the SDK logs it on stderr) and the call goes on.
PREDICTION = {"tool-error": "raises", "stray-line": "returns"}
