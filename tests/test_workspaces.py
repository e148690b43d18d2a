"""Shared project workspaces: each role against each action on the HTML and API paths, the default private project,
shared papers, owner stamping, project-scoped dedupe, the last-admin rule, the data migration and
`manage.py projects`. Personas: alice (admin), bob (writer), carol (reader), mallory (outsider)."""

from __future__ import annotations

import importlib
from http import HTTPStatus
from io import StringIO

import pytest
from django.apps import apps as global_apps
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from chat.models import ChatMessage, ProjectChat
from papers.models import Paper, UserPaper
from projects.models import Project, ProjectMembership, ProjectPaper, Role
from projects.services import (
    DefaultProjectError,
    LastAdminError,
    add_member,
    add_papers_to_project,
    get_project_for_user,
    remove_member,
    remove_paper_from_library,
    set_member_role,
)

pytestmark = pytest.mark.django_db

PERSONAS = ["alice", "bob", "carol", "mallory"]


@pytest.fixture
def team(alice, bob, carol, mallory, team_project, add_paper):
    """The personas by name, and the "Lab" project holding one paper alice added from her library."""
    paper = add_paper(alice, title="Shared Sleep Study")
    add_papers_to_project(project=team_project, papers=[paper], user=alice)
    ProjectChat.objects.create(project=team_project).messages.create(author=alice, role="user", text="Hello lab")
    return {"alice": alice, "bob": bob, "carol": carol, "mallory": mallory, "project": team_project, "paper": paper}


def expected(persona: str, need: Role) -> HTTPStatus:
    """What *persona* gets for an action needing *need* in the Lab project."""
    role = {"alice": Role.ADMIN, "bob": Role.WRITER, "carol": Role.READER}.get(persona)
    if role is None:
        return HTTPStatus.NOT_FOUND
    return HTTPStatus.OK if role.allows(need) else HTTPStatus.FORBIDDEN


# --- the authorisation function -------------------------------------------------------------------


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize("need", [Role.READER, Role.WRITER, Role.ADMIN])
def test_get_project_for_user_follows_the_role_table(team, persona, need):
    user, project = team[persona], team["project"]
    want = expected(persona, need)
    if want == HTTPStatus.OK:
        assert get_project_for_user(user, project.pk, need=need) == project
    elif want == HTTPStatus.FORBIDDEN:
        with pytest.raises(Exception) as error:
            get_project_for_user(user, project.pk, need=need)
        assert getattr(error.value, "code", None) == "forbidden"
    else:
        from django.http import Http404

        with pytest.raises(Http404):
            get_project_for_user(user, project.pk, need=need)


def test_no_project_named_means_the_users_own_default_project(alice, bob):
    mine = get_project_for_user(alice, None)
    assert (mine.owner, mine.is_default, mine.name, mine.member_role) == (alice, True, "My papers", Role.ADMIN)
    assert get_project_for_user(bob, None) != mine


def test_every_new_user_gets_exactly_one_default_project(django_user_model):
    user = django_user_model.objects.create_user("dave", "dave@example.org", "pw-dave-12345")
    assert Project.objects.filter(owner=user, is_default=True).count() == 1
    assert ProjectMembership.objects.get(project__owner=user, user=user).role == Role.ADMIN


def test_signing_up_gives_the_new_account_its_default_project(client):
    password = "a-long-pass-phrase-42"
    client.post(reverse("signup"), {"username": "erin", "password1": password, "password2": password})
    assert Project.objects.filter(owner__username="erin", is_default=True).count() == 1


# --- HTML: each action for each role ----------------------------------------------------------------

# (name, needed role, args kind, POST data or None for GET)
HTML_ACTIONS = [
    ("projects:detail", Role.READER, "project", None),
    ("projects:members", Role.READER, "project", None),
    ("projects:paper_reader", Role.READER, "paper", None),
    ("projects:paper_file", Role.READER, "paper", None),
    ("projects:reprocess", Role.WRITER, "paper", {}),
    ("projects:chat_clear", Role.WRITER, "project", {}),
    ("projects:update", Role.ADMIN, "project", {"name": "Renamed", "description": "new"}),
    ("projects:archive", Role.ADMIN, "project", {"archived": "1"}),
    ("projects:member_add", Role.ADMIN, "project", {"user": "dave@example.org", "role": "reader"}),
]


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize(("name", "need", "kind", "data"), HTML_ACTIONS, ids=[a[0] for a in HTML_ACTIONS])
def test_html_actions_follow_the_role_table(team, client_for, django_user_model, persona, name, need, kind, data):
    django_user_model.objects.create_user("dave", "dave@example.org", "pw-dave-12345")
    project, paper = team["project"], team["paper"]
    args = [project.pk] if kind == "project" else [project.pk, paper.pk]
    client = client_for(team[persona])
    url = reverse(name, args=args)
    response = client.get(url) if data is None else client.post(url, data)
    want = expected(persona, need)
    if want == HTTPStatus.OK:
        assert response.status_code in (HTTPStatus.OK, HTTPStatus.FOUND)
    else:
        assert response.status_code == want
    if want == HTTPStatus.FORBIDDEN:
        assert "you cannot" in response.content.decode()
    project.refresh_from_db()
    if want != HTTPStatus.OK:  # nothing changed
        assert project.name == "Lab" and project.archived_at is None
        assert ChatMessage.objects.filter(chat__project=project).count() == 1
        assert not ProjectMembership.objects.filter(project=project, user__username="dave").exists()


@pytest.mark.parametrize("persona", PERSONAS)
def test_only_writers_and_admins_remove_a_paper_from_a_shared_project(team, client_for, persona):
    project, paper = team["project"], team["paper"]
    response = client_for(team[persona]).post(reverse("projects:remove_paper", args=[project.pk, paper.pk]))
    want = expected(persona, Role.WRITER)
    assert response.status_code == (HTTPStatus.FOUND if want == HTTPStatus.OK else want)
    assert ProjectPaper.objects.filter(project=project, paper=paper).exists() == (want != HTTPStatus.OK)


@pytest.mark.parametrize("persona", PERSONAS)
def test_only_admins_delete_a_project(team, client_for, persona):
    project = team["project"]
    response = client_for(team[persona]).post(reverse("projects:delete", args=[project.pk]))
    want = expected(persona, Role.ADMIN)
    assert response.status_code == (HTTPStatus.FOUND if want == HTTPStatus.OK else want)
    assert Project.objects.filter(pk=project.pk).exists() == (want != HTTPStatus.OK)


@pytest.mark.parametrize("persona", PERSONAS)
def test_only_writers_and_admins_add_papers_from_their_own_library(team, client_for, add_paper, persona):
    project = team["project"]
    own = add_paper(team[persona], title=f"{persona}'s paper")
    response = client_for(team[persona]).post(reverse("projects:add_papers", args=[project.pk]), {"papers": [own.pk]})
    want = expected(persona, Role.WRITER)
    assert response.status_code == (HTTPStatus.FOUND if want == HTTPStatus.OK else want)
    link = ProjectPaper.objects.filter(project=project, paper=own).first()
    assert (link is not None) == (want == HTTPStatus.OK)
    if link is not None:
        assert link.added_by == team[persona]


def test_the_projects_list_shows_the_default_first_then_shared_with_badge_and_role(team, client_for):
    page = client_for(team["carol"]).get(reverse("projects:list")).content.decode()
    assert page.index("My papers") < page.index("Lab")
    assert "Shared" in page and "Reader" in page


def test_members_see_the_member_list_but_only_admins_get_the_forms(team, client_for):
    carol_page = client_for(team["carol"]).get(reverse("projects:members", args=[team["project"].pk])).content.decode()
    assert "bob" in carol_page and "alice" in carol_page
    assert 'id="add-member"' not in carol_page
    alice_page = client_for(team["alice"]).get(reverse("projects:members", args=[team["project"].pk])).content.decode()
    assert 'id="add-member"' in alice_page


def test_an_admin_manages_members_by_username_or_email_with_confirmation(team, client_for, django_user_model):
    dave = django_user_model.objects.create_user("dave", "dave@example.org", "pw-dave-12345")
    project, client = team["project"], client_for(team["alice"])
    client.post(reverse("projects:member_add", args=[project.pk]), {"user": "DAVE@example.org", "role": "writer"})
    assert ProjectMembership.objects.get(project=project, user=dave).role == Role.WRITER
    client.post(reverse("projects:member_set_role", args=[project.pk, dave.pk]), {"role": "reader"})
    assert ProjectMembership.objects.get(project=project, user=dave).role == Role.READER
    confirm = client.get(reverse("projects:member_remove", args=[project.pk, dave.pk]))
    assert confirm.status_code == HTTPStatus.OK and "Remove dave" in confirm.content.decode()
    assert ProjectMembership.objects.filter(project=project, user=dave).exists()  # a GET changes nothing
    client.post(reverse("projects:member_remove", args=[project.pk, dave.pk]))
    assert not ProjectMembership.objects.filter(project=project, user=dave).exists()


def test_adding_an_unknown_user_says_so(team, client_for):
    response = client_for(team["alice"]).post(
        reverse("projects:member_add", args=[team["project"].pk]), {"user": "nobody", "role": "reader"}, follow=True
    )
    assert "No user with the username or e-mail address" in response.content.decode()


def test_a_reader_may_leave_a_shared_project(team, client_for):
    project, carol = team["project"], team["carol"]
    client_for(carol).post(reverse("projects:member_remove", args=[project.pk, carol.pk]))
    assert not ProjectMembership.objects.filter(project=project, user=carol).exists()


# --- private default isolation, the default project's rules ---------------------------------------


def test_alices_default_project_is_invisible_to_bob(alice, bob, client_for, api_client_for):
    default = get_project_for_user(alice, None)
    assert client_for(bob).get(reverse("projects:detail", args=[default.pk])).status_code == HTTPStatus.NOT_FOUND
    assert api_client_for(bob).get(f"/api/projects/{default.pk}/").status_code == HTTPStatus.NOT_FOUND
    assert default.pk not in [p["id"] for p in api_client_for(bob).get("/api/projects/").json()]


def test_the_default_project_cannot_be_shared_archived_or_deleted(alice, bob, client_for):
    default = get_project_for_user(alice, None)
    with pytest.raises(DefaultProjectError):
        add_member(project=default, user=bob, role=Role.READER)
    client_for(alice).post(reverse("projects:delete", args=[default.pk]))
    client_for(alice).post(reverse("projects:archive", args=[default.pk]), {"archived": "1"})
    default.refresh_from_db()
    assert default.archived_at is None
    assert not ProjectMembership.objects.filter(project=default, user=bob).exists()


# --- the last-admin rule --------------------------------------------------------------------------


def test_the_last_admin_can_neither_leave_nor_be_demoted(team):
    project, alice, bob = team["project"], team["alice"], team["bob"]
    with pytest.raises(LastAdminError):
        set_member_role(project=project, user=alice, role=Role.WRITER)
    with pytest.raises(LastAdminError):
        remove_member(project=project, user=alice)
    set_member_role(project=project, user=bob, role=Role.ADMIN)
    remove_member(project=project, user=alice)  # another admin now exists
    assert not ProjectMembership.objects.filter(project=project, user=alice).exists()


def test_the_api_refuses_demoting_the_last_admin_with_a_stable_code(team, api_client_for):
    project, alice = team["project"], team["alice"]
    response = api_client_for(alice).patch(
        f"/api/projects/{project.pk}/members/{alice.pk}/", {"role": "reader"}, format="json"
    )
    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["error"]["code"] == "last_admin"


# --- papers in shared projects --------------------------------------------------------------------


def test_members_read_a_shared_paper_through_the_project_without_it_entering_their_library(team, client_for):
    project, paper, carol = team["project"], team["paper"], team["carol"]
    client = client_for(carol)
    page = client.get(reverse("projects:paper_reader", args=[project.pk, paper.pk]))
    assert page.status_code == HTTPStatus.OK
    assert reverse("projects:paper_file", args=[project.pk, paper.pk]) in page.content.decode()
    pdf = client.get(reverse("projects:paper_file", args=[project.pk, paper.pk]))
    assert pdf.status_code == HTTPStatus.OK and b"".join(pdf.streaming_content).startswith(b"%PDF")
    # A citation link (the library reader URL) works for a member too.
    assert client.get(reverse("papers:reader", args=[paper.pk])).status_code == HTTPStatus.OK
    assert not UserPaper.objects.filter(user=carol, paper=paper).exists()
    assert client.get(reverse("papers:library")).content.decode().count("Shared Sleep Study") == 0


def test_an_outsider_cannot_read_a_shared_paper_by_any_url(team, client_for):
    project, paper, client = team["project"], team["paper"], client_for(team["mallory"])
    for url in (
        reverse("projects:paper_reader", args=[project.pk, paper.pk]),
        reverse("projects:paper_file", args=[project.pk, paper.pk]),
        reverse("papers:reader", args=[paper.pk]),
        reverse("papers:file", args=[paper.pk]),
    ):
        assert client.get(url).status_code == HTTPStatus.NOT_FOUND, url


def test_a_paper_of_another_project_is_not_readable_through_this_one(team, client_for, add_paper):
    bobs = add_paper(team["bob"], title="Bob's private paper")
    project = team["project"]
    response = client_for(team["carol"]).get(reverse("projects:paper_file", args=[project.pk, bobs.pk]))
    assert response.status_code == HTTPStatus.NOT_FOUND


def test_removing_from_my_library_keeps_the_paper_in_shared_projects_but_not_private_ones(team, alice):
    paper, project = team["paper"], team["project"]
    private = get_project_for_user(alice, None)
    add_papers_to_project(project=private, papers=[paper], user=alice)

    deleted = remove_paper_from_library(user=alice, paper=paper)

    assert not deleted
    assert not ProjectPaper.objects.filter(project=private, paper=paper).exists()
    assert ProjectPaper.objects.filter(project=project, paper=paper).exists()
    assert Paper.objects.filter(pk=paper.pk).exists()


def test_the_paper_goes_only_when_no_library_and_no_project_holds_it(
    team, alice, client_for, django_capture_on_commit_callbacks
):
    paper, project = team["paper"], team["project"]
    remove_paper_from_library(user=alice, paper=paper)
    assert Paper.objects.filter(pk=paper.pk).exists()
    with django_capture_on_commit_callbacks() as callbacks:
        client_for(team["bob"]).post(reverse("projects:remove_paper", args=[project.pk, paper.pk]))
    assert not Paper.objects.filter(pk=paper.pk).exists()
    assert callbacks  # the file and chunks are deleted after commit


def test_the_same_file_twice_in_one_project_is_one_link_and_in_two_projects_two(
    team, bob, client_for, make_pdf, django_capture_on_commit_callbacks
):
    project = team["project"]
    data = make_pdf(["The same study, page one."])
    client = client_for(bob)
    upload = reverse("projects:upload", args=[project.pk])
    client.post(upload, {"file": _file(data)})
    second = client.post(upload, {"file": _file(data)}, follow=True)
    assert "already in this project" in second.content.decode()
    paper = Paper.objects.get(project_links__project=project, project_links__added_by=bob)
    assert ProjectPaper.objects.filter(project=project, paper=paper).count() == 1
    bobs_default = get_project_for_user(bob, None)
    client.post(reverse("projects:upload", args=[bobs_default.pk]), {"file": _file(data)})
    assert ProjectPaper.objects.filter(paper=paper).count() == 2


def _file(data: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("study.pdf", data, content_type="application/pdf")


def test_the_paper_cap_holds_per_project_whoever_adds(team, settings, add_paper, client_for):
    settings.PROJECT_MAX_PAPERS = 2
    project = team["project"]
    add_papers_to_project(project=project, papers=[add_paper(team["alice"], title="Second")], user=team["alice"])
    third = add_paper(team["bob"], title="Third")
    response = client_for(team["bob"]).post(
        reverse("projects:add_papers", args=[project.pk]), {"papers": [third.pk]}, follow=True
    )
    assert "at most 2 papers" in response.content.decode()
    assert project.project_papers.count() == 2


# --- owner stamping -------------------------------------------------------------------------------


def test_a_client_sent_owner_or_added_by_is_ignored(team, api_client_for, add_paper):
    bob, alice, project = team["bob"], team["alice"], team["project"]
    client = api_client_for(bob)
    created = client.post(
        "/api/projects/", {"name": "Bob's", "owner": alice.pk, "owner_id": alice.pk}, format="json"
    ).json()
    assert Project.objects.get(pk=created["id"]).owner == bob
    assert created["owner"] == "bob"
    own = add_paper(bob, title="Bob adds")
    client.post(
        f"/api/projects/{project.pk}/papers/",
        {"paper_id": own.pk, "added_by": alice.pk, "added_by_id": alice.pk},
        format="json",
    )
    assert ProjectPaper.objects.get(project=project, paper=own).added_by == bob


# --- API ------------------------------------------------------------------------------------------

# (method, path template, needed role, body)
API_ACTIONS = [
    ("get", "/api/projects/{p}/", Role.READER, None),
    ("get", "/api/projects/{p}/papers/", Role.READER, None),
    ("get", "/api/projects/{p}/members/", Role.READER, None),
    ("get", "/api/projects/{p}/chat/", Role.READER, None),
    ("delete", "/api/projects/{p}/chat/", Role.WRITER, None),
    ("delete", "/api/projects/{p}/papers/{paper}/", Role.WRITER, None),
    ("patch", "/api/projects/{p}/", Role.ADMIN, {"name": "Renamed"}),
    ("post", "/api/projects/{p}/members/", Role.ADMIN, {"user": "dave", "role": "reader"}),
    ("delete", "/api/projects/{p}/", Role.ADMIN, None),
]


@pytest.mark.parametrize("persona", PERSONAS)
@pytest.mark.parametrize(("method", "path", "need", "body"), API_ACTIONS, ids=[f"{a[0]} {a[1]}" for a in API_ACTIONS])
def test_api_actions_follow_the_role_table(team, api_client_for, django_user_model, persona, method, path, need, body):
    django_user_model.objects.create_user("dave", "dave@example.org", "pw-dave-12345")
    url = path.format(p=team["project"].pk, paper=team["paper"].pk)
    response = getattr(api_client_for(team[persona]), method)(url, body, format="json")
    want = expected(persona, need)
    if want == HTTPStatus.OK:
        assert response.status_code < 300
    else:
        assert response.status_code == want
        code = "forbidden" if want == HTTPStatus.FORBIDDEN else "not_found"
        assert response.json()["error"]["code"] == code
        assert Project.objects.get(pk=team["project"].pk).name == "Lab"


def test_the_projects_api_lists_my_projects_with_my_role_default_first(team, api_client_for):
    projects = api_client_for(team["carol"]).get("/api/projects/").json()
    assert [(p["name"], p["role"], p["is_default"]) for p in projects] == [
        ("My papers", "admin", True),
        ("Lab", "reader", False),
    ]
    default = api_client_for(team["carol"]).get("/api/projects/default/").json()
    assert (default["name"], default["is_default"], default["id"]) == ("My papers", True, projects[0]["id"])


def test_upload_without_a_project_goes_to_my_default_project(alice, api_client_for, make_pdf):
    response = api_client_for(alice).post(
        "/api/upload/", {"file": _file(make_pdf(["Default upload."]))}, format="multipart"
    )
    assert response.status_code == HTTPStatus.CREATED
    paper_id = response.json()["papers"][0]["id"]
    assert get_project_for_user(alice, None).papers.filter(pk=paper_id).exists()


def test_a_reader_cannot_upload_into_a_shared_project(team, api_client_for, make_pdf):
    response = api_client_for(team["carol"]).post(
        "/api/upload/", {"file": _file(make_pdf(["Nope."])), "project_id": team["project"].pk}, format="multipart"
    )
    assert response.status_code == HTTPStatus.FORBIDDEN
    assert response.json()["error"]["code"] == "forbidden"


def test_search_and_ask_of_a_project_i_am_not_in_are_404(team, api_client_for):
    client = api_client_for(team["mallory"])
    pk = team["project"].pk
    assert client.get("/api/search/", {"q": "sleep", "project_id": pk}).status_code == HTTPStatus.NOT_FOUND
    response = client.post("/api/ask/", {"question": "sleep?", "project_id": pk}, format="json")
    assert response.status_code == HTTPStatus.NOT_FOUND


def test_a_reader_asks_through_the_api_and_the_question_is_stamped_with_them(team, api_client_for):
    project, carol = team["project"], team["carol"]
    response = api_client_for(carol).post(
        "/api/ask/", {"question": "What did they find?", "project_id": project.pk, "author": team["alice"].pk}
    )
    assert response.status_code == HTTPStatus.OK
    question = ChatMessage.objects.filter(chat__project=project, role="user").order_by("-pk").first()
    assert (question.text, question.author) == ("What did they find?", carol)
    history = api_client_for(team["bob"]).get(f"/api/projects/{project.pk}/chat/").json()
    assert [m["asker"] for m in history if m["role"] == "user"] == ["alice", "carol"]


def test_ask_without_a_project_asks_my_default_project(alice, api_client_for):
    response = api_client_for(alice).post("/api/ask/", {"question": "Anything?"}, format="json")
    assert response.status_code == HTTPStatus.OK
    assert response.json()["status"] == "no_papers"
    assert ChatMessage.objects.filter(chat__project=get_project_for_user(alice, None), author=alice).exists()


# --- the data migration ---------------------------------------------------------------------------


def test_the_migration_gives_defaults_and_admin_memberships_and_running_it_twice_changes_nothing(alice, bob):
    migration = importlib.import_module("projects.migrations.0003_default_projects_and_admins")
    # As before the migration: no default projects, a project without its owner's membership, and a
    # user who already named a project "My papers".
    Project.objects.filter(is_default=True).delete()
    legacy = Project.objects.create(owner=alice, name="Legacy")
    Project.objects.create(owner=bob, name="My papers")
    ProjectMembership.objects.filter(project__owner=bob).delete()

    migration.give_defaults_and_admins(global_apps)
    state = sorted(Project.objects.values_list("owner__username", "name", "is_default"))
    members = sorted(ProjectMembership.objects.values_list("project__name", "user__username", "role"))
    migration.give_defaults_and_admins(global_apps)

    assert sorted(Project.objects.values_list("owner__username", "name", "is_default")) == state
    assert sorted(ProjectMembership.objects.values_list("project__name", "user__username", "role")) == members
    assert ("alice", "My papers", True) in state
    assert ("bob", "My papers (2)", True) in state
    assert ProjectMembership.objects.get(project=legacy, user=alice).role == Role.ADMIN
    assert ProjectMembership.objects.get(project__name="My papers", project__owner=bob, user=bob).role == Role.ADMIN


# --- manage.py projects and ask -------------------------------------------------------------------


def run(*args: str) -> str:
    out = StringIO()
    call_command("projects", *args, stdout=out)
    return out.getvalue()


def test_operators_manage_members_with_the_projects_command(alice, bob, carol):
    created = run("create", "Reading group", "--user", "alice")
    assert "Reading group" in created
    run("add-member", "Reading group", "bob@example.org", "--role", "writer", "--user", "alice")
    run("set-role", "Reading group", "bob", "admin", "--user", "alice")
    assert "bob\tadmin" in run("members", "Reading group", "--user", "alice")
    listing = run("list", "--user", "bob")
    assert "Reading group [admin]" in listing and "My papers [admin]" in listing
    run("remove-member", "Reading group", "alice", "--user", "bob")
    assert "alice" not in run("members", "Reading group", "--user", "bob")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("add-member", "Lab", "nobody", "--user", "alice"), "No user with"),
        (("add-member", "Nope", "bob", "--user", "alice"), "no project named"),
        (("add-member", "Lab", "mallory", "--user", "carol"), "you cannot manage"),
        (("members", "Lab", "--user", "mallory"), "no project named"),
        (("set-role", "Lab", "alice", "reader", "--user", "alice"), "at least one admin"),
        (("create", "x", "--user", "ghost"), "No user with"),
    ],
)
def test_the_projects_command_fails_clearly(team, args, message):
    with pytest.raises(CommandError, match=message):
        run(*args)


def test_a_project_name_the_user_lacks_lists_the_projects_they_have_and_no_others(team):
    lab = team["project"]
    with pytest.raises(CommandError, match=rf"Their projects: .*{lab.pk} \('Lab'\)"):
        run("members", "Nope", "--user", "bob")
    with pytest.raises(CommandError) as refused:
        run("members", "Nope", "--user", "mallory")
    assert "'Lab'" not in str(refused.value)


def test_a_project_id_the_user_lacks_lists_the_projects_they_have_and_no_others(team):
    lab = team["project"]
    with pytest.raises(CommandError, match=rf"bob has no project '99999'\. Their projects: .*{lab.pk} \('Lab'\)"):
        run("members", "99999", "--user", "bob")
    with pytest.raises(CommandError) as refused:  # another user's project, by its id, is no project
        run("members", str(lab.pk), "--user", "mallory")
    assert "'Lab'" not in str(refused.value)


def test_the_projects_command_exits_non_zero_on_failure(team):
    import subprocess
    import sys

    from django.conf import settings

    result = subprocess.run(
        [sys.executable, "manage.py", "projects", "members", "Lab", "--user", "nobody-at-all"],
        capture_output=True,
        text=True,
        cwd=settings.BASE_DIR,
        timeout=120,
    )
    assert result.returncode != 0


def test_ask_without_project_uses_the_default_project_and_members_can_ask_shared_ones(team):
    out = StringIO()
    call_command("ask", "Anything here?", "--user", "carol", "--json", stdout=out)
    assert '"status": "no_papers"' in out.getvalue()
    with pytest.raises(CommandError, match="no project"):
        call_command("ask", "Sleep?", "--user", "mallory", "--project", "Lab", stdout=StringIO())
    out = StringIO()
    call_command("ask", "Sleep?", "--user", "carol", "--project", "Lab", "--json", stdout=out)
    assert '"answer"' in out.getvalue()


# --- project notes follow the roles ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("persona", "role"), [("alice", "writer"), ("bob", "writer"), ("carol", "reader"), ("mallory", None)]
)
def test_project_notes_follow_the_members_roles(team, persona, role):
    from notes.services import notes_role, project_item

    found = notes_role(team[persona], project_item(team["project"]))
    assert (found.value if found else None) == role


@pytest.mark.django_db
def test_a_shared_projects_papers_go_by_the_names_and_corrections_of_the_member_who_added_them(
    alice, bob, team_project, make_pdf
):
    from papers.services import add_paper_to_library, correct_paper_metadata
    from projects.models import papers_as_added

    data = make_pdf(["An untitled draft about quorum leases."])
    shared = add_paper_to_library(user=alice, data=data, filename="alice-private-diary.pdf").paper
    assert add_paper_to_library(user=bob, data=data, filename="bob-quorum-leases.pdf").paper == shared
    correct_paper_metadata(user=bob, paper=shared, changes={"year": 2019})
    correct_paper_metadata(user=alice, paper=shared, changes={"year": 1999})
    own = add_paper_to_library(user=alice, data=make_pdf(["Alice's notes on Raft."]), filename="raft-notes.pdf").paper
    add_papers_to_project(project=team_project, papers=[shared], user=bob)
    add_papers_to_project(project=team_project, papers=[own], user=alice)

    named = {paper.pk: paper for paper in papers_as_added(team_project)}

    assert set(named) == {shared.pk, own.pk}
    assert named[shared.pk].display_title == "bob-quorum-leases.pdf"
    assert named[shared.pk].cited.year == 2019
    assert named[own.pk].display_title == "raft-notes.pdf"
