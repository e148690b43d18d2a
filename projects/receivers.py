"""A safety net of the projects app's own rule: every account has a default project.

The demo command calls `ensure_default_project` itself; this receiver covers sign-up (whose view
lives in the bottom layer, which may not import projects) and every other way a user row is made
(the admin, `createsuperuser`, tests, scripts).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User


def give_new_user_a_default_project(
    sender: type[User], instance: User, created: bool, raw: bool = False, **kwargs: Any
) -> None:
    if created and not raw:
        from projects.services import ensure_default_project

        ensure_default_project(instance)
