class SharedCache:
    """One cache for many users, honouring each result's ttlMs and cacheScope."""

    def __init__(self):
        self.entries = {}  # (owner, key) -> (fresh until, result); owner None for a public result

    def get(self, user: str, key: str, fetch) -> dict:
        now = time.monotonic()
        for owner in (None, user):  # a public entry serves everyone, a private one its own user
            fresh_until, result = self.entries.get((owner, key), (0.0, None))
            if now < fresh_until:
                return result
        result = fetch()
        ttl = max(result.get("ttlMs", 0), 0) / 1000  # a negative ttlMs reads as 0: do not reuse
        owner = None if result.get("cacheScope") == "public" else user  # no scope: the safe choice, private
        if ttl > 0:
            self.entries[(owner, key)] = (now + ttl, result)
        return result
