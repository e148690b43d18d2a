from django.apps import AppConfig


class IndexingConfig(AppConfig):
    name = "indexing"

    def ready(self) -> None:
        # The domain apps send signals and never import indexing; this is where indexing listens,
        # and where it answers the library's full-text search (papers holds no text).
        from indexing import fulltext, receivers
        from papers.fulltext import register_full_text_search

        receivers.connect()
        register_full_text_search(fulltext.find_in_papers)
