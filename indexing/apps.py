from django.apps import AppConfig


class IndexingConfig(AppConfig):
    name = "indexing"

    def ready(self) -> None:
        # The domain apps send signals and never import indexing; this is where indexing listens.
        from indexing import receivers

        receivers.connect()
