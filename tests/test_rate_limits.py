"""Per-user upload limits (API and pages) and the per-socket frame budget."""

from http import HTTPStatus

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotagent.ratelimit import FrameBudget
from papers.models import UserPaper


def pdf(data: bytes, name: str = "paper.pdf") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/pdf")


@pytest.mark.django_db
def test_uploads_beyond_the_per_user_limit_get_429_slow_down(alice, bob, make_pdf, api_client_for, settings):
    settings.USER_UPLOADS_PER_MINUTE = 2
    client = api_client_for(alice)
    for n in range(2):
        data = {"file": pdf(make_pdf([f"Paper {n}."]))}
        assert client.post("/api/library/", data, format="multipart").status_code == HTTPStatus.CREATED
    refused = client.post("/api/library/", {"file": pdf(make_pdf(["Paper 3."]))}, format="multipart")
    assert refused.status_code == HTTPStatus.TOO_MANY_REQUESTS
    assert refused.json()["error"]["code"] == "slow_down"
    assert 1 <= int(refused["Retry-After"]) <= 120
    assert UserPaper.objects.filter(user=alice).count() == 2
    # The limit is per user: bob's first upload goes through.
    others = api_client_for(bob).post("/api/library/", {"file": pdf(make_pdf(["Bob's."]))}, format="multipart")
    assert others.status_code == HTTPStatus.CREATED


@pytest.mark.django_db
def test_a_page_upload_beyond_the_limit_says_slow_down(alice, make_pdf, client_for, settings):
    settings.USER_UPLOADS_PER_MINUTE = 1
    client = client_for(alice)
    client.post("/papers/upload/", {"file": pdf(make_pdf(["One."]))})
    response = client.post("/papers/upload/", {"file": pdf(make_pdf(["Two."]))}, follow=True)
    assert "Slow down" in response.content.decode()
    assert UserPaper.objects.filter(user=alice).count() == 1


def test_the_frame_budget_allows_a_burst_then_refills_with_time():
    now = [0.0]
    budget = FrameBudget(burst=3, per_second=2.0, clock=lambda: now[0])
    assert [budget.take() for _ in range(4)] == [True, True, True, False]
    now[0] = 0.5  # one frame's worth of refill
    assert [budget.take() for _ in range(2)] == [True, False]
    now[0] = 100.0  # never more than the burst
    assert [budget.take() for _ in range(4)] == [True, True, True, False]


@pytest.mark.django_db
def test_a_minute_boundary_gives_no_fresh_allowance(alice, settings):
    from annotagent.ratelimit import RateLimitedError, check_user_rate

    settings.USER_QUESTIONS_PER_MINUTE = 2
    start = 1_000_000 * 60 - 1.0  # one second before a window boundary
    check_user_rate(user_id=alice.pk, action="question", now=start)
    check_user_rate(user_id=alice.pk, action="question", now=start + 0.5)
    with pytest.raises(RateLimitedError) as refused:
        check_user_rate(user_id=alice.pk, action="question", now=start + 2.0)
    assert refused.value.code == "slow_down"
    # A minute later the allowance is back.
    check_user_rate(user_id=alice.pk, action="question", now=start + 2.0 + 120)


@pytest.mark.django_db
@pytest.mark.parametrize("offset", [0.5, 20.0, 59.0])
@pytest.mark.parametrize("early", [False, True])
def test_a_refusal_names_the_wait_after_which_the_next_try_is_allowed(alice, settings, offset, early):
    from annotagent.ratelimit import RateLimitedError, check_user_rate

    settings.USER_QUESTIONS_PER_MINUTE = 3
    start = (2_000_000 + 10 * early) * 60 + offset  # each case in windows of its own
    for n in range(3):
        check_user_rate(user_id=alice.pk, action="question", now=start + n * 0.1)
    with pytest.raises(RateLimitedError) as refused:
        check_user_rate(user_id=alice.pk, action="question", now=start + 0.4)
    wait = refused.value.retry_after
    assert wait is not None and 1 <= wait <= 120
    if early:  # a second and a half before the named time is still too early
        with pytest.raises(RateLimitedError):
            check_user_rate(user_id=alice.pk, action="question", now=start + 0.4 + wait - 1.5)
    else:  # at the named time the try goes through
        check_user_rate(user_id=alice.pk, action="question", now=start + 0.4 + wait + 0.5)


def test_daphne_sends_429_with_its_reason_phrase():
    from twisted.web.http import Request
    from twisted.web.test.requesthelper import DummyChannel

    from annotagent.http import fill_reason_phrases

    fill_reason_phrases()  # as annotagent.asgi does when Daphne loads it
    request = Request(DummyChannel())
    request.setResponseCode(HTTPStatus.TOO_MANY_REQUESTS)
    assert request.code_message == b"Too Many Requests"
