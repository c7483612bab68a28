def read_note(name: str) -> str:
    """A note, by file name, from inside NOTES only."""
    path = (NOTES / name).resolve()  # ".." and symbolic links are followed here, before the check
    if not path.is_relative_to(NOTES.resolve()) or not path.is_file():
        raise KeyError(name)  # the server answers "unknown resource", -32602
    return path.read_text()
