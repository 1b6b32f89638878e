# hindsight's API server (REST, MCP over HTTP, metrics). The embedding model ships in
# the package: the image downloads nothing at run time. See compose.yaml.
FROM python:3.11-slim
RUN useradd --create-home --uid 10001 hindsight
WORKDIR /src
COPY pyproject.toml README.md ./
COPY src ./src
RUN pip install --no-cache-dir ".[server,postgres,redis,qdrant]" && rm -rf /src
USER hindsight
WORKDIR /home/hindsight
# Caches (keyword indexes) only: the memories live in PostgreSQL, sessions in Redis.
ENV HINDSIGHT_HOME=/home/hindsight/data
EXPOSE 8765
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8765/ready', timeout=2)"]
CMD ["hindsight", "serve", "--host", "0.0.0.0", "--port", "8765"]
