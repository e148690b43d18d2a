"""Every user gets a default private project, every project an admin membership for its owner.

Idempotent: a user who has a default project and an owner who already is a member are left alone,
so running it twice changes nothing.
"""

from typing import Any

from django.db import migrations

DEFAULT_PROJECT_NAME = "My papers"


def default_project_name(taken: set[str]) -> str:
    """"My papers", or "My papers (2)", ... when the user already has a project of that name."""
    name, n = DEFAULT_PROJECT_NAME, 1
    while name.lower() in taken:
        n += 1
        name = f"{DEFAULT_PROJECT_NAME} ({n})"
    return name


def give_defaults_and_admins(apps: Any, schema_editor: Any = None) -> None:
    from django.conf import settings

    app_label, model_name = settings.AUTH_USER_MODEL.split(".")
    user_model = apps.get_model(app_label, model_name)
    project_model = apps.get_model("projects", "Project")
    membership_model = apps.get_model("projects", "ProjectMembership")
    with_default = set(project_model.objects.filter(is_default=True).values_list("owner_id", flat=True))
    for user in user_model.objects.exclude(pk__in=with_default).iterator():
        taken = {name.lower() for name in project_model.objects.filter(owner=user).values_list("name", flat=True)}
        project_model.objects.create(owner=user, name=default_project_name(taken), is_default=True)
    for project in project_model.objects.iterator():
        membership_model.objects.get_or_create(project=project, user_id=project.owner_id, defaults={"role": "admin"})


class Migration(migrations.Migration):
    dependencies = [("projects", "0002_workspaces")]

    operations = [migrations.RunPython(give_defaults_and_admins, migrations.RunPython.noop)]
