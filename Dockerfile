# Build a static, non-root sqlbot image: docker build -t sqlbot . && docker run --rm sqlbot sql "SELECT 1"
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ENV CGO_ENABLED=0
RUN go build -trimpath -ldflags="-s -w" -o /out/sqlbot ./cmd/sqlbot

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/sqlbot /usr/local/bin/sqlbot
# The demo database lives in the cache directory; mount your own with SQLBOT_DB.
ENV XDG_CACHE_HOME=/home/nonroot/.cache
USER nonroot:nonroot
ENTRYPOINT ["/usr/local/bin/sqlbot"]
CMD ["serve"]
