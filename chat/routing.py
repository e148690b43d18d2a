from django.urls import path, re_path

from chat import consumers

websocket_urlpatterns = [
    path("ws/projects/<int:project_id>/chat/", consumers.ProjectChatConsumer.as_asgi()),
    path("ws/papers/<int:paper_id>/chat/", consumers.PaperChatConsumer.as_asgi()),
    # Last: every other path is refused cleanly (the router would fail the handshake with a 500).
    re_path(r"", consumers.NotFoundConsumer.as_asgi()),
]
