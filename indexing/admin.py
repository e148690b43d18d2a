from django.contrib import admin

from indexing.models import ContextualBlurb


@admin.register(ContextualBlurb)
class ContextualBlurbAdmin(admin.ModelAdmin[ContextualBlurb]):
    list_display = ["paper", "model", "created_at"]
    list_filter = ["model"]
    search_fields = ["paper__title", "blurb", "text_sha256"]
    raw_id_fields = ["paper"]
