# blogfeeds worker image: runs `scrapy crawl ...` directly, or scrapyd (the deployment issue
# completes the scrapyd side).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, in their own cached layer.
COPY requirements.txt .
RUN pip install -r requirements.txt

COPY scrapy.cfg pyproject.toml README.md ./
COPY blogfeeds ./blogfeeds
RUN pip install --no-deps . \
    && useradd --create-home --uid 10001 blogfeeds \
    && mkdir -p /data && chown blogfeeds /data

USER 10001
ENV BLOGFEEDS_DATABASE_URL=sqlite:////data/blogfeeds.sqlite3
VOLUME ["/data"]

# e.g. docker run IMAGE scrapy crawl blogs -a start_urls=https://some.blog/
CMD ["scrapy", "crawl", "blogs"]
