from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("annotagent.auth_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's start-up script as a file: the CSP refuses inline scripts.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="api-schema", template_name="api_docs.html"),
        name="api-docs",
    ),
    path("api/", include("annotagent.api_urls")),
    path("papers/", include("papers.urls")),
    path("notes/", include("notes.urls")),
    path("", include("projects.urls")),
]

# An unmatched path under /api/ answers with the API's JSON error, not the HTML page.
handler404 = "annotagent.http.not_found"
