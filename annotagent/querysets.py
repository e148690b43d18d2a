"""QuerySet pieces the domain apps share."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from typing import ClassVar, TypeVar

from django.db import models
from django.dispatch import Signal

_M = TypeVar("_M", bound=models.Model)


class BulkCreateSignalQuerySet(models.QuerySet[_M]):
    """A QuerySet whose `bulk_create` sends `bulk_created` (sender: the model; `objs`: the list of rows
    it created) after the insert, because Django sends no `post_save` for it. Layers above the model
    listen to one of the two, so a bulk insert, or a many-to-many `add` that goes through the
    through-model's `bulk_create`, is never missed."""

    bulk_created: ClassVar[Signal]

    def bulk_create(
        self,
        objs: Iterable[_M],
        batch_size: int | None = None,
        ignore_conflicts: bool = False,
        update_conflicts: bool = False,
        update_fields: Collection[str] | None = None,
        unique_fields: Collection[str] | None = None,
    ) -> list[_M]:
        created = super().bulk_create(
            objs,
            batch_size=batch_size,
            ignore_conflicts=ignore_conflicts,
            update_conflicts=update_conflicts,
            update_fields=update_fields,
            unique_fields=unique_fields,
        )
        self.bulk_created.send(sender=self.model, objs=created)
        return created
