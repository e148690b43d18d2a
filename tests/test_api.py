"""The REST API: the main flow with a token, JSON errors with stable codes, and the OpenAPI schema."""

from http import HTTPStatus

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from chat.models import ChatMessage, ProjectChat
from papers.models import Paper, UserPaper
from projects.models import Project, ProjectPaper
from projects.services import add_papers_to_project, create_project

pytestmark = pytest.mark.django_db


def pdf_upload(data: bytes, name: str = "paper.pdf") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


def test_the_main_api_flow_with_a_token(alice, make_pdf):
    client = APIClient()
    token = client.post("/api/auth/token/", {"username": "alice", "password": "alice-password-1"}).json()["token"]
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")

    created = client.post("/api/projects/", {"name": "Sleep", "description": "REM"}, format="json")
    assert created.status_code == HTTPStatus.CREATED
    project_id = created.json()["id"]
    assert created.json()["room"] == 10

    data = make_pdf(["A paper about sleep."])
    uploaded = client.post("/api/library/", {"file": pdf_upload(data)}, format="multipart")
    assert uploaded.status_code == HTTPStatus.CREATED
    paper_id = uploaded.json()["paper"]["id"]
    again = client.post("/api/library/", {"file": pdf_upload(data)}, format="multipart")
    assert again.status_code == HTTPStatus.OK
    assert again.json()["already_in_library"] is True
    assert [p["id"] for p in client.get("/api/library/").json()] == [paper_id]

    detail = client.get(f"/api/papers/{paper_id}/").json()
    assert detail["index_status"] == "pending"
    assert detail["reader_url"] == f"/papers/{paper_id}/read/"

    added = client.post(f"/api/projects/{project_id}/papers/", {"paper_id": paper_id}, format="json")
    assert added.status_code == HTTPStatus.CREATED
    second = client.post(
        f"/api/projects/{project_id}/papers/", {"file": pdf_upload(make_pdf(["Another."]))}, format="multipart"
    )
    assert second.status_code == HTTPStatus.CREATED
    second_id = second.json()["papers"][0]["id"]
    listed = client.get(f"/api/projects/{project_id}/papers/").json()
    assert [p["id"] for p in listed] == [paper_id, second_id]

    renamed = client.patch(f"/api/projects/{project_id}/", {"name": "Sleep science"}, format="json")
    assert renamed.json()["name"] == "Sleep science"
    assert renamed.json()["description"] == "REM"
    described = client.patch(f"/api/projects/{project_id}/", {"description": "NREM too"}, format="json")
    assert (described.json()["name"], described.json()["description"]) == ("Sleep science", "NREM too")
    assert client.get(f"/api/projects/{project_id}/").json()["paper_count"] == 2

    chat = ProjectChat.objects.create(project_id=project_id)
    ChatMessage.objects.create(chat=chat, role="user", text="Why sleep?")
    ChatMessage.objects.create(
        chat=chat,
        role="assistant",
        text="Memory [1].",
        citations={"1": {"paper_id": paper_id, "title": "Sleep", "page": 1, "text": "..."}},
        status="answered",
        sentences=[{"text": "Memory [1].", "citations": [1], "supported": True, "not_stated": False}],
    )
    history = client.get(f"/api/projects/{project_id}/chat/").json()
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["citations"]["1"]["page"] == 1
    # The same Message fields as the WebSocket's history event.
    assert (history[0]["status"], history[1]["status"]) == ("", "answered")
    assert history[1]["sentences"][0]["supported"] is True
    assert client.delete(f"/api/projects/{project_id}/chat/").status_code == HTTPStatus.NO_CONTENT
    assert client.get(f"/api/projects/{project_id}/chat/").json() == []

    removed = client.delete(f"/api/projects/{project_id}/papers/{paper_id}/")
    assert removed.status_code == HTTPStatus.NO_CONTENT
    assert UserPaper.objects.filter(user=alice, paper_id=paper_id).exists()

    assert client.delete(f"/api/library/{second_id}/").status_code == HTTPStatus.NO_CONTENT
    assert not ProjectPaper.objects.filter(project_id=project_id).exists()

    assert client.delete(f"/api/projects/{project_id}/").status_code == HTTPStatus.NO_CONTENT
    assert not Project.objects.filter(pk=project_id).exists()
    assert Paper.objects.filter(pk=paper_id).exists()
    assert [p["is_default"] for p in client.get("/api/projects/").json()] == [True]


def test_the_apis_file_url_serves_the_pdf_to_a_token_reader_and_a_404_to_anyone_else(
    alice, carol, mallory, team_project, add_paper, api_client_for
):
    paper = add_paper(alice, title="Sleep")
    add_papers_to_project(project=team_project, papers=[paper], user=alice)
    url = api_client_for(alice).get(f"/api/papers/{paper.pk}/").json()["file_url"]

    response = api_client_for(alice).get(url)

    assert response.status_code == HTTPStatus.OK and response["Content-Type"] == "application/pdf"
    assert b"".join(response.streaming_content) == paper.file.open("rb").read()
    assert api_client_for(carol).get(url).status_code == HTTPStatus.OK  # a reader of a project holding it
    assert api_client_for(mallory).get(url).status_code == HTTPStatus.NOT_FOUND
    refused = APIClient(HTTP_AUTHORIZATION="Token not-a-token").get(url)
    assert refused.status_code == HTTPStatus.UNAUTHORIZED and refused["WWW-Authenticate"] == "Token"
    assert refused.json()["error"]["code"] == "authentication_failed"
    assert APIClient().get(url).status_code == HTTPStatus.FOUND  # signed out, no token: to sign in


def test_creating_a_project_under_a_name_in_use_answers_with_a_stable_code(alice, api_client_for):
    client = api_client_for(alice)
    assert client.post("/api/projects/", {"name": "Consensus"}, format="json").status_code == HTTPStatus.CREATED
    response = client.post("/api/projects/", {"name": "Consensus"}, format="json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["error"]["code"] == "project_name_taken"


def test_adding_past_the_cap_answers_with_a_stable_code_and_adds_nothing(alice, add_paper, api_client_for, settings):
    settings.PROJECT_MAX_PAPERS = 2
    project = create_project(owner=alice, name="Small")
    add_papers_to_project(project=project, papers=[add_paper(alice, title="In")], user=alice)
    ids = [add_paper(alice, title="A").pk, add_paper(alice, title="B").pk]

    response = api_client_for(alice).post(f"/api/projects/{project.pk}/papers/", {"paper_ids": ids}, format="json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json() == {
        "error": {
            "code": "project_full",
            "message": "A project holds at most 2 papers; this one has 1, so there is room for 1 more.",
        }
    }
    assert project.project_papers.count() == 1


def test_an_upload_to_a_full_project_through_the_api_leaves_the_library_unchanged(
    alice, add_paper, make_pdf, api_client_for, settings
):
    settings.PROJECT_MAX_PAPERS = 1
    project = create_project(owner=alice, name="Full")
    add_papers_to_project(project=project, papers=[add_paper(alice)], user=alice)

    response = api_client_for(alice).post(
        f"/api/projects/{project.pk}/papers/", {"file": pdf_upload(make_pdf(["Extra"]))}, format="multipart"
    )

    assert response.json()["error"]["code"] == "project_full"
    assert UserPaper.objects.filter(user=alice).count() == 1
    assert Paper.objects.count() == 1


@pytest.mark.parametrize(
    ("data", "message"), [(b"GIF89a not a pdf", "The file is not a PDF."), (b"", "The file is empty.")]
)
@pytest.mark.parametrize("field", ["file", "files"])
def test_a_non_pdf_upload_answers_with_a_stable_code(alice, api_client_for, data, message, field):
    fake = SimpleUploadedFile("x.pdf", data, content_type="application/pdf")

    response = api_client_for(alice).post("/api/library/", {field: fake}, format="multipart")

    # One file or several, an empty file is refused by the same code and words as any other non-PDF.
    body = response.json()
    error = body["error"] if field == "file" else body["results"][0]["error"]
    assert error == {"code": "not_a_pdf", "message": message}
    assert response.status_code == (HTTPStatus.BAD_REQUEST if field == "file" else HTTPStatus.OK)
    assert not UserPaper.objects.filter(user=alice).exists()


@pytest.mark.parametrize("route", ["/api/upload/", "project papers"])
def test_an_empty_file_uploaded_into_a_project_is_refused_as_not_a_pdf(alice, api_client_for, route):
    project = create_project(owner=alice, name="Empty files")
    url = f"/api/projects/{project.pk}/papers/" if route == "project papers" else route
    fake = SimpleUploadedFile("x.pdf", b"", content_type="application/pdf")

    response = api_client_for(alice).post(url, {"file": fake, "project_id": project.pk}, format="multipart")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["error"] == {"code": "not_a_pdf", "message": "The file is empty."}
    assert not UserPaper.objects.filter(user=alice).exists()


def test_two_files_to_the_one_file_upload_are_refused_and_nothing_is_kept(alice, api_client_for, make_pdf):
    files = [SimpleUploadedFile(f"{n}.pdf", make_pdf([f"Paper number {n}."]), "application/pdf") for n in (1, 2)]

    project = create_project(owner=alice, name="Two at once")
    for url in ("/api/upload/", f"/api/projects/{project.pk}/papers/"):
        for file in files:
            file.seek(0)
        response = api_client_for(alice).post(url, {"file": files}, format="multipart")

        assert response.status_code == HTTPStatus.BAD_REQUEST, url
        assert "/api/library/" in str(response.json())
        assert not Paper.objects.exists()


def test_an_oversized_upload_answers_with_a_stable_code(alice, api_client_for, make_pdf, settings):
    settings.UPLOAD_MAX_BYTES = 64

    response = api_client_for(alice).post("/api/library/", {"file": pdf_upload(make_pdf(["big"]))}, format="multipart")

    assert response.json()["error"]["code"] == "upload_too_large"
    assert not Paper.objects.exists()


def test_adding_papers_needs_exactly_one_of_id_ids_or_file(alice, api_client_for):
    project = create_project(owner=alice, name="P")

    response = api_client_for(alice).post(f"/api/projects/{project.pk}/papers/", {}, format="json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert response.json()["error"]["code"] == "invalid"


def test_creating_a_project_without_a_name_is_a_validation_error(alice, api_client_for):
    response = api_client_for(alice).post("/api/projects/", {"description": "no name"}, format="json")

    assert response.status_code == HTTPStatus.BAD_REQUEST
    assert "name" in response.json()["error"]["fields"]


def test_the_api_needs_authentication():
    response = APIClient().get("/api/projects/")

    assert response.status_code == HTTPStatus.UNAUTHORIZED
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["error"]["code"] == "not_authenticated"


def test_the_openapi_schema_validates(tmp_path):
    target = tmp_path / "schema.yml"

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(target))

    schema = target.read_text()
    for path in ("/api/projects/{id}/papers/", "/api/library/", "/api/projects/{id}/chat/", "/api/auth/token/"):
        assert path in schema


def test_the_schema_and_docs_are_served(client):
    assert client.get("/api/schema/").status_code == HTTPStatus.OK
    assert client.get("/api/docs/").status_code == HTTPStatus.OK


def test_an_api_path_no_route_matches_is_a_json_404_and_a_page_path_stays_html(alice, api_client_for, client):
    response = api_client_for(alice).get("/api/projects/abc/")
    assert response.status_code == HTTPStatus.NOT_FOUND
    assert response.json()["error"]["code"] == "not_found"
    page = client.get("/no-such-page/")
    assert page.status_code == HTTPStatus.NOT_FOUND
    assert page["Content-Type"].startswith("text/html")
