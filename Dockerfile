# syntax=docker/dockerfile:1
# hcpspec as a container image: the static musl binary alone in an empty image, with an empty
# /tmp and a working folder, run as an unprivileged user (docs/install.md, "Container image").
# The release workflow builds it for linux/amd64 and linux/arm64; by hand:
#
#   docker build -t hcpspec .
#   docker run --rm -v "$PWD/report:/work/reports" hcpspec run
#
# No Docker engine runs where hcpspec is developed: scripts/check-wheel.sh runs the same static
# binary alone in an empty root (chroot) on every CI run instead.
FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /hcpspec
COPY . .
# The flags of every shipped build (no path of the build machine in the binary); on Alpine the
# target is musl and the binary static.
RUN . scripts/release-env.sh && cargo build --release --locked --bin hcpspec \
    && mkdir -p /image/tmp /image/work && chmod 1777 /image/tmp \
    && cp target/release/hcpspec /image/hcpspec

FROM scratch
COPY --from=build /image /
COPY --from=build --chown=65532:65532 /image/work /work
USER 65532:65532
ENV HOME=/work
WORKDIR /work
ENTRYPOINT ["/hcpspec"]
CMD ["run"]
