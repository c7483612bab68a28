def minted_for(claims: dict, resource: str) -> bool:
    """Whether the token's claims name resource among its audiences."""
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    return resource in audiences  # each compared whole: a prefix is another server
