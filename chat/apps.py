from django.apps import AppConfig


class ChatConfig(AppConfig):
    name = "chat"

    def ready(self) -> None:
        from chat.prefill import prefill_on_index
        from indexing.signals import paper_indexed

        # Indexing cannot import chat; it announces a finished paper and chat warms its cache.
        paper_indexed.connect(prefill_on_index, dispatch_uid="chat.prefill_sentence_embeddings")
