import uuid

from django.db import migrations, models


def create_installation(apps, schema_editor):
    """Made here, committed with the schema, so the id the chunk index is bound to always exists;
    `Installation.current_id` makes it on first use where a database was emptied (tests' flush)."""
    Installation = apps.get_model("indexing", "Installation")
    Installation.objects.get_or_create(pk=1, defaults={"installation_id": uuid.uuid4().hex})


class Migration(migrations.Migration):
    dependencies = [
        ("indexing", "0001_initial"),
    ]

    operations = [
        migrations.CreateModel(
            name="Installation",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("installation_id", models.CharField(max_length=32, unique=True)),
                ("created_at", models.DateTimeField(auto_now_add=True)),
            ],
        ),
        migrations.RunPython(create_installation, migrations.RunPython.noop),
    ]
