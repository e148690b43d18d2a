"""Privacy: everything of alice's is a 404 for mallory; sign-up, sign-in, sign-out; CSRF."""

from http import HTTPStatus

import pytest
from django.test import Client
from django.urls import reverse
from django.views.defaults import server_error

from chat.models import ChatMessage, ProjectChat
from papers.models import UserPaper
from projects.models import Project, ProjectPaper
from projects.services import add_papers_to_project, create_project, find_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def alices(alice, add_paper):
    """alice's project holding alice's paper, with a chat message."""
    project = create_project(owner=alice, name="Alice's secret project")
    paper = add_paper(alice, title="Alice's paper", page_count=3)
    add_papers_to_project(project=project, papers=[paper], user=alice)
    chat = ProjectChat.objects.create(project=project)
    ChatMessage.objects.create(chat=chat, role="user", text="private question")
    return project, paper


HTML_GETS = [
    ("projects:detail", "project"),
    ("projects:delete", "project"),
    ("projects:chat_clear", "project"),
    ("papers:reader", "paper"),
    ("papers:file", "paper"),
    ("papers:remove", "paper"),
]

HTML_POSTS = [
    ("projects:update", "project", {"name": "pwned"}),
    ("projects:delete", "project", {}),
    ("projects:add_papers", "project", {}),
    ("projects:upload", "project", {}),
    ("projects:chat_ask", "project", {"text": "hi"}),
    ("projects:chat_clear", "project", {}),
    ("papers:remove", "paper", {}),
    ("papers:add_to_project", "paper", {"new_project_name": "Stolen"}),
]


@pytest.mark.parametrize(("name", "target"), HTML_GETS)
def test_an_outsider_gets_404_on_every_page_of_alices(mallory, alices, client_for, name, target):
    project, paper = alices
    pk = project.pk if target == "project" else paper.pk

    response = client_for(mallory).get(reverse(name, args=[pk]))

    assert response.status_code == HTTPStatus.NOT_FOUND


@pytest.mark.parametrize(("name", "target", "data"), HTML_POSTS)
def test_an_outsider_gets_404_on_every_form_of_alices_and_changes_nothing(
    mallory, alices, client_for, name, target, data
):
    project, paper = alices
    pk = project.pk if target == "project" else paper.pk

    response = client_for(mallory).post(reverse(name, args=[pk]), data)

    assert response.status_code == HTTPStatus.NOT_FOUND
    project.refresh_from_db()
    assert project.name == "Alice's secret project"
    assert ProjectPaper.objects.filter(project=project, paper=paper).exists()
    assert ChatMessage.objects.filter(chat__project=project).count() == 1
    assert not Project.objects.filter(owner=mallory, is_default=False).exists()
    assert not UserPaper.objects.filter(user=mallory).exists()


@pytest.mark.parametrize("name", ["projects:remove_paper", "projects:reprocess"])
def test_an_outsider_gets_404_on_alices_project_paper_actions(mallory, alices, client_for, name):
    project, paper = alices

    response = client_for(mallory).post(reverse(name, args=[project.pk, paper.pk]))

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert ProjectPaper.objects.filter(project=project, paper=paper).exists()


def test_an_outsider_cannot_put_alices_paper_in_their_own_project(mallory, alices, client_for, api_client_for):
    _, paper = alices
    mine = create_project(owner=mallory, name="Mallory's")

    html = client_for(mallory).post(reverse("projects:add_papers", args=[mine.pk]), {"papers": [paper.pk]})
    api = api_client_for(mallory).post(f"/api/projects/{mine.pk}/papers/", {"paper_id": paper.pk}, format="json")

    assert html.status_code == HTTPStatus.FOUND  # the picker rejects the unknown choice
    assert api.status_code == HTTPStatus.NOT_FOUND
    assert not mine.project_papers.exists()
    assert not UserPaper.objects.filter(user=mallory).exists()


def test_an_outsider_cannot_add_their_paper_to_alices_project_from_the_library(mallory, alices, add_paper, client_for):
    project, _ = alices
    own = add_paper(mallory, title="Mallory's paper")

    response = client_for(mallory).post(reverse("papers:add_to_project", args=[own.pk]), {"project": project.pk})

    assert response.status_code == HTTPStatus.FOUND
    assert not ProjectPaper.objects.filter(project=project, paper=own).exists()


API_CALLS = [
    ("get", "/api/projects/{project}/"),
    ("patch", "/api/projects/{project}/"),
    ("delete", "/api/projects/{project}/"),
    ("get", "/api/projects/{project}/papers/"),
    ("post", "/api/projects/{project}/papers/"),
    ("delete", "/api/projects/{project}/papers/{paper}/"),
    ("get", "/api/projects/{project}/chat/"),
    ("delete", "/api/projects/{project}/chat/"),
    ("get", "/api/library/{paper}/"),
    ("delete", "/api/library/{paper}/"),
    ("get", "/api/papers/{paper}/"),
]


@pytest.mark.parametrize(("method", "url"), API_CALLS)
def test_an_outsider_gets_404_on_every_api_endpoint_of_alices(mallory, alices, api_client_for, method, url):
    project, paper = alices

    response = getattr(api_client_for(mallory), method)(
        url.format(project=project.pk, paper=paper.pk), {"name": "pwned", "paper_id": paper.pk}, format="json"
    )

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json()["error"]["code"] == "not_found"
    assert Project.objects.get(pk=project.pk).name == "Alice's secret project"
    assert ChatMessage.objects.filter(chat__project=project).count() == 1


def test_a_missing_page_is_the_sites_404_page_with_a_way_back(mallory, alices, client_for, settings):
    settings.DEBUG = False
    _, paper = alices
    library = f'href="{reverse("papers:library")}"'

    for url in ("/no-such-page/", reverse("papers:reader", args=[paper.pk])):
        response = client_for(mallory).get(url)

        assert response.status_code == HTTPStatus.NOT_FOUND
        page = response.content.decode()
        assert "<h1>Page not found</h1>" in page and library in page and "Alice" not in page


def test_an_api_404_stays_json_without_debug(mallory, alices, api_client_for, settings):
    settings.DEBUG = False
    _, paper = alices

    response = api_client_for(mallory).get(f"/api/papers/{paper.pk}/")

    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json()["error"]["code"] == "not_found"


def test_the_500_page_renders_from_what_django_gives_it(rf):
    response = server_error(rf.get("/"))

    assert response.status_code == HTTPStatus.INTERNAL_SERVER_ERROR
    page = response.content.decode()
    assert "<h1>Something went wrong</h1>" in page and f'href="{reverse("papers:library")}"' in page


def test_outsiders_lists_do_not_show_alices_things(mallory, alices, api_client_for, client_for):
    client = api_client_for(mallory)

    assert [p["is_default"] for p in client.get("/api/projects/").json()] == [True]  # only her own default
    assert client.get("/api/library/").json() == []
    assert "Alice" not in client_for(mallory).get(reverse("projects:list")).content.decode()


def test_the_owner_can_open_everything(alice, alices, client_for):
    project, paper = alices
    client = client_for(alice)

    for url in (
        reverse("projects:detail", args=[project.pk]),
        reverse("papers:reader", args=[paper.pk]),
        reverse("papers:file", args=[paper.pk]),
    ):
        assert client.get(url).status_code == HTTPStatus.OK


@pytest.mark.parametrize("name", ["projects:list", "papers:library"])
def test_anonymous_visitors_are_sent_to_sign_in(client, name):
    response = client.get(reverse(name))

    assert response.status_code == HTTPStatus.FOUND
    assert response.url.startswith(reverse("login"))


def test_signing_up_creates_an_account_and_signs_in(client, django_user_model):
    response = client.post(
        reverse("signup"),
        {"username": "carol", "password1": "a-long-pass-phrase-9", "password2": "a-long-pass-phrase-9"},
    )

    assert response.url == reverse("projects:list")
    assert django_user_model.objects.filter(username="carol").exists()
    assert client.get(reverse("projects:list")).status_code == HTTPStatus.OK


def test_an_account_signed_up_with_an_e_mail_address_can_be_added_by_it(client, django_user_model):
    fields = {"username": "dana", "email": "Dana@Example.org", "password1": "a-long-pass-phrase-9"}
    client.post(reverse("signup"), {**fields, "password2": fields["password1"]})
    assert find_user("dana@example.org").username == "dana"

    # The same address again is refused: adding a member by it must name one account.
    client.post(reverse("logout"))
    again = {**fields, "username": "dana2", "password2": fields["password1"]}
    response = client.post(reverse("signup"), again)
    assert response.status_code == HTTPStatus.OK
    assert "Another account has this e-mail address." in response.content.decode()
    assert not django_user_model.objects.filter(username="dana2").exists()


def test_signing_in_and_out(alice, client):
    response = client.post(reverse("login"), {"username": "alice", "password": "alice-password-1"})
    assert response.url == reverse("projects:list")
    assert client.get(reverse("projects:list")).status_code == HTTPStatus.OK

    client.post(reverse("logout"))

    assert client.get(reverse("projects:list")).status_code == HTTPStatus.FOUND


def test_the_sign_in_page_renders(client):
    page = client.get(reverse("login")).content.decode()

    assert 'name="csrfmiddlewaretoken"' in page
    assert reverse("signup") in page


def test_forms_without_a_csrf_token_are_refused(alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    response = client.post(reverse("projects:create"), {"name": "No token"})

    assert response.status_code == HTTPStatus.FORBIDDEN
    assert not Project.objects.filter(is_default=False).exists()


def test_every_page_sends_a_content_security_policy(alice, client_for):
    response = client_for(alice).get(reverse("projects:list"))

    assert "script-src 'self'" in response["Content-Security-Policy"]


def test_outsider_cannot_post_to_a_papers_chat_form(alice, mallory, add_paper, client_for):
    paper = add_paper(alice)
    response = client_for(mallory).post(reverse("papers:chat_ask", args=[paper.pk]))
    assert response.status_code == HTTPStatus.NOT_FOUND


def test_the_reader_offers_a_chat_on_that_paper_alone(alice, add_paper, client_for):
    paper = add_paper(alice)
    page = client_for(alice).get(reverse("papers:reader", args=[paper.pk])).content.decode()
    assert f'data-socket-path="/ws/papers/{paper.pk}/chat/"' in page
