from django.db import migrations, models


def never_built_is_empty(apps, schema_editor):
    """Version 0 meant "never built"; now that is "". Papers built before keep their old number as
    their version, but their chunks carry no content hash, so retrieval skips them until
    `manage.py backfill_chunks` rebuilds them (it finds them by their missing chunks)."""
    Paper = apps.get_model("papers", "Paper")
    Paper.objects.filter(index_version="0").update(index_version="")


class Migration(migrations.Migration):
    dependencies = [
        ("papers", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="paper",
            name="index_claim",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        migrations.AddField(
            model_name="paper",
            name="index_claimed_until",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AlterField(
            model_name="paper",
            name="index_version",
            field=models.CharField(blank=True, default="", max_length=32),
        ),
        migrations.RunPython(never_built_is_empty, migrations.RunPython.noop),
    ]
