from django.apps import AppConfig


class ProjectsConfig(AppConfig):
    name = "projects"

    def ready(self) -> None:
        from django.conf import settings
        from django.db.models.signals import post_save

        from projects.receivers import give_new_user_a_default_project

        post_save.connect(
            give_new_user_a_default_project, sender=settings.AUTH_USER_MODEL, dispatch_uid="projects_default_project"
        )
