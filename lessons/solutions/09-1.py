import re

DATE_FORM = {"type": "object", "properties": {"date": {"type": "string"}}, "required": ["date"]}


def pick_date(ctx: Context) -> str:
    """Book the day the user names, asking again (a new key, a new round) until it is YYYY-MM-DD."""
    attempt = 1
    while True:
        answer = ctx.elicit(f"date-{attempt}", "Which day (YYYY-MM-DD)?", DATE_FORM)
        if answer.get("action") != "accept":
            return "Nothing booked."
        date = answer.get("content", {}).get("date", "")
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
            return "Booked " + date
        attempt += 1
