class ResourceCache:
    """Resource texts by URI: read once, read again after notifications/resources/updated."""

    def __init__(self, client: MCPClient):
        self.client = client
        self.texts = {}

    def read(self, uri: str) -> str:
        if uri not in self.texts:
            self.client.request("resources/subscribe", {"uri": uri})
            self.texts[uri] = self.client.read_resource(uri)["contents"][0]["text"]
        return self.texts[uri]

    def on_notification(self, note: dict):
        # Like list_changed, the notification names what changed and carries no content: drop that one, read it later.
        if note.get("method") == "notifications/resources/updated":
            self.texts.pop(note.get("params", {}).get("uri"), None)
