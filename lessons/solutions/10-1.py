SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
CHANGES = {"notifications/tools/list_changed": "tools", "notifications/prompts/list_changed": "prompts",
           "notifications/resources/list_changed": "resources"}


def route(note: dict, mine):
    """What a notification asks of the client, if it belongs to the listen stream `mine`; else None."""
    params = note.get("params") or {}
    tag = (params.get("_meta") or {}).get(SUBSCRIPTION, None)
    if tag != mine or type(tag) is not type(mine):  # "7" is not 7: ids compare exactly
        return None
    if note["method"] == "notifications/resources/updated":
        return params.get("uri")
    return CHANGES.get(note["method"])
