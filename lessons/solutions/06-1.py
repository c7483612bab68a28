def split_lines(buffer: bytes, chunk: bytes) -> tuple:
    """The complete messages in buffer + chunk, parsed, and the incomplete rest."""
    *lines, rest = (buffer + chunk).split(b"\n")  # the last piece has no newline yet: it waits for more
    messages = []
    for line in lines:
        if not line.strip():
            continue
        try:
            messages.append(json.loads(line))
        except ValueError:
            continue  # junk on the pipe (a stray print) is not a message
    return messages, rest
