from django.urls import path

from chat import consumers

websocket_urlpatterns = [
    path("ws/projects/<int:project_id>/chat/", consumers.ProjectChatConsumer.as_asgi()),
    path("ws/papers/<int:paper_id>/chat/", consumers.PaperChatConsumer.as_asgi()),
]
