"""`manage.py mcp_server [--token KEY]`: Annotagent's MCP tools over stdio, for an MCP client that
starts the server itself (a desktop or editor assistant). The API token comes from --token or the
ANNOTAGENT_TOKEN environment variable; the tools act as its user (see `mcp_server.server`)."""

import os

from django.core.management.base import BaseCommand, CommandError, CommandParser

from mcp_server.server import TokenError, build_server, user_for_token

TOKEN_VARIABLE = "ANNOTAGENT_TOKEN"


class Command(BaseCommand):
    help = (
        "Serve the MCP tools (project_list, project_get, project_default_get, search, ask) over stdio "
        f"as the user of an API token (--token or ${TOKEN_VARIABLE})."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--token", help=f"the API token (default: ${TOKEN_VARIABLE})")

    def handle(self, *args: object, **options: object) -> None:
        token = options.get("token") or os.environ.get(TOKEN_VARIABLE)
        try:
            user = user_for_token(str(token) if token else None)
        except TokenError as error:
            raise CommandError(f"{error} Pass --token or set {TOKEN_VARIABLE}.") from None
        # stdout is the protocol channel: nothing else may be written to it.
        build_server(user).run("stdio")
