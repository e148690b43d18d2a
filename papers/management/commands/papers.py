"""`manage.py papers --user USERNAME [--first-author NAME] [--author NAME] [--year Y] [--before Y]
[--after Y] [--venue TEXT] [--text TEXT] [--mine] [--json]`: a user's library, filtered by metadata
(`--text` also searches the papers' full text).

Metadata is what that user sees: the PDF's, with their own corrections. `--mine` keeps the papers
that list one of the names they publish under (set in their profile), name variants included.
"""

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from annotagent.errors import AnnotagentError
from papers.metadata import MetadataFilter, parse_year
from papers.models import Paper
from papers.services import library_papers, set_author_names


def paper_record(paper: Paper) -> dict[str, Any]:
    """One paper as the command's JSON shows it (the metadata the viewer sees)."""
    cited = paper.cited
    return {
        "id": paper.pk,
        "title": paper.display_title,
        "authors": cited.authors,
        "first_author": cited.first_author,
        "year": cited.year,
        "venue": cited.venue,
        "doi": cited.doi,
        "arxiv_id": paper.arxiv_id,
        "sources": cited.sources,
        "index_status": paper.index_status,
        "index_error": paper.index_error if paper.index_status == Paper.IndexStatus.FAILED else "",
    }


class Command(BaseCommand):
    help = "List a user's papers with their metadata, filtered by first author, author, year, venue or text."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True)
        parser.add_argument("--first-author", default="", help="a name or surname; initials and diacritics match")
        parser.add_argument("--author", action="append", default=[], help="any author (repeatable)")
        parser.add_argument("--year", help="published in this year")
        parser.add_argument("--before", help="published before this year")
        parser.add_argument("--after", help="published after this year")
        parser.add_argument("--venue", default="", help="text in the venue (OSDI, SOSP, ...)")
        parser.add_argument("--text", default="", help="text in the title, authors or venue, or in the full text")
        parser.add_argument("--mine", action="store_true", help="papers listing one of the user's author names")
        parser.add_argument(
            "--set-author-names",
            metavar="NAMES",
            help="set the names the user publishes under ('A. Smith, Alice Smith'; '' clears), for --mine",
        )
        parser.add_argument("--json", action="store_true", help="print a JSON list")

    def handle(self, *args: Any, **options: Any) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"No user named {options['user']!r}.")
        if options["set_author_names"] is not None:
            try:
                profile = set_author_names(user=user, names=options["set_author_names"])
            except AnnotagentError as exc:
                raise CommandError(exc.message) from exc
            self.stdout.write(f"Author names of {user.username}: {', '.join(profile.names) or '(none)'}")
            if not options["mine"]:
                return
        try:
            criteria = MetadataFilter(
                first_author=options["first_author"],
                authors=tuple(options["author"]),
                year=parse_year(options["year"]),
                year_before=parse_year(options["before"]),
                year_after=parse_year(options["after"]),
                venue=options["venue"],
                text=options["text"],
            )
            listing = library_papers(user=user, criteria=criteria, mine=options["mine"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        except AnnotagentError as exc:
            raise CommandError(exc.message) from exc
        if listing.full_text_error is not None:
            self.stderr.write(f"Only titles, authors and venues were searched: {listing.full_text_error.message}")
        records = [paper_record(paper) for paper in listing.papers]
        if options["json"]:
            self.stdout.write(json.dumps(records, indent=2, ensure_ascii=False))
            return
        for record in records:
            who = record["first_author"] + (" et al." if len(record["authors"]) > 1 else "")
            where = ", ".join(str(part) for part in (record["venue"], record["year"]) if part)
            line = f"{record['id']:>5}  {record['title']}  ({'; '.join(p for p in (who, where) if p)})"
            if record["index_status"] != Paper.IndexStatus.READY:
                # A paper that is not searched says so: "[failed: No text could be read ...]", "[queued]".
                status = Paper.IndexStatus(record["index_status"]).label.lower()
                line += f"  [{status}: {record['index_error']}]" if record["index_error"] else f"  [{status}]"
            self.stdout.write(line)
        self.stdout.write(f"{len(records)} paper{'s' if len(records) != 1 else ''}")
