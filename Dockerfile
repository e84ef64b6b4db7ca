# blogfeeds worker image: scrapyd by default (deploy the egg with scrapyd-deploy, docs/cluster.md);
# the same image runs any project command directly, e.g.
#   docker run --rm -e REDIS_URL=... -e MYSQL_URL=... IMAGE scrapy crawl blogs
# Settings come from the environment (MYSQL_URL, REDIS_URL, BLOGFEEDS_*; see blogfeeds/settings.py).
FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, in their own cached layer (scrapyd, scrapyd-client and setuptools<81 among
# them: scrapyd jobs run with this interpreter, so everything a spider imports must be here).
COPY requirements.txt .
RUN pip install -r requirements.txt

RUN useradd --create-home --uid 10001 blogfeeds \
    && mkdir -p /var/lib/scrapyd /data \
    && chown blogfeeds /app /var/lib/scrapyd /data
COPY docker/scrapyd.conf /etc/scrapyd/scrapyd.conf
COPY docker/entrypoint.sh docker/healthcheck.py /usr/local/bin/

# The project is copied, not pip-installed: scrapyd appends a deployed egg to the END of
# sys.path, so a blogfeeds package in site-packages would silently shadow every deployed version.
# `scrapy ...` finds it here through scrapy.cfg (the working directory), and `scrapyd-deploy`
# builds the egg here (build/ and blogfeeds.egg-info/: the user owns /app).
COPY --chown=10001 scrapy.cfg setup.py pyproject.toml README.md ./
COPY --chown=10001 blogfeeds ./blogfeeds

USER 10001
# SCRAPYD_HOME holds eggs/, logs/, dbs/ (job history) and is the working directory of the jobs
# (spool files land there). SCRAPYD_USERNAME / SCRAPYD_PASSWORD switch basic auth on.
ENV SCRAPYD_HOME=/var/lib/scrapyd \
    SCRAPYD_BIND_ADDRESS=0.0.0.0 \
    SCRAPYD_HTTP_PORT=6800 \
    BLOGFEEDS_DATABASE_URL=sqlite:////data/blogfeeds.sqlite3
VOLUME ["/var/lib/scrapyd", "/data"]
EXPOSE 6800

# 401 counts as alive (scrapyd with auth on answers every request without credentials so).
HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 \
    CMD ["python", "/usr/local/bin/healthcheck.py"]

ENTRYPOINT ["/usr/local/bin/entrypoint.sh"]
CMD ["scrapyd"]
