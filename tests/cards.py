"""A report card read back (each rule's outcome as the card printed it), and a tape for its Wire outside a card."""

import re

import report_card


def outcomes_in_text(printed: str) -> dict:
    """Each rule's outcome as the text card shows it: a row's mark, or its id in a "could not run" paragraph."""
    marks = {mark: outcome for outcome, (mark, _) in report_card.OUTCOMES.items()}
    found = {}
    for paragraph in printed.split("\n\n"):
        if paragraph.startswith(report_card.mark("could_not_run") + " could not run ("):
            ids = " ".join(line.strip() for line in paragraph.splitlines()).split("): ", 1)[1]
            found |= dict.fromkeys(ids.split(", "), "could_not_run")
        for line in paragraph.splitlines():
            row = re.match(r"  (\S) ([\w-]+): ", line)
            if row and row[1] in marks:
                found[row[2]] = marks[row[1]]
    return found


def tape():
    """The record function of a tape for a Wire outside a card: each entry kept, numbered."""
    kept = []

    def record(entry: dict) -> dict:
        kept.append(entry)
        return entry | {"at": len(kept) - 1}
    return record
