from django import template

register = template.Library()

STATUS_LABELS = {"pending": "queued", "indexing": "indexing…", "ready": "ready", "failed": "failed"}


@register.filter(name="status_label")
def status_label(status: str) -> str:
    """The words on a paper's status chip (`chat.js` uses the same words for live updates)."""
    return STATUS_LABELS.get(status, status)
