import base64
import json

import pytest

from autorater_pipelines.gecko import MediaError, resolve_media
from autorater_pipelines.gecko.media import sniff_mime_type


@pytest.mark.parametrize(
    ("ext", "media_type", "mime"),
    [
        ("png", "image", "image/png"),
        ("jpg", "image", "image/jpeg"),
        ("webp", "image", "image/webp"),
        ("gif", "image", "image/gif"),
        ("mp4", "video", "video/mp4"),
        ("mov", "video", "video/quicktime"),
        ("webm", "video", "video/webm"),
    ],
)
def test_local_files_are_sent_inline_with_their_mime_type(media_file, ext, media_type, mime):
    path = media_file(ext)
    (part,) = resolve_media(str(path), media_type=media_type)
    assert part.mime_type == mime
    assert part.data == path.read_bytes() and part.uri is None


def test_content_wins_over_a_wrong_extension_and_relative_paths_use_base_dir(media_file, tmp_path):
    path = media_file("jpg", name="actually_jpeg.png")
    (part,) = resolve_media("actually_jpeg.png", media_type="image", base_dir=tmp_path)
    assert part.mime_type == "image/jpeg"
    (part,) = resolve_media(path.as_uri(), media_type="image")
    assert part.data == path.read_bytes()


@pytest.mark.parametrize(
    ("uri", "media_type", "mime"),
    [
        ("gs://bucket/images/cat.PNG", "image", "image/png"),
        ("https://example.com/a/b.jpeg?x=1", "image", "image/jpeg"),
        ("http://example.com/clip.webm", "video", "video/webm"),
        ("gs://bucket/clips/dog.mov", "video", "video/quicktime"),
    ],
)
def test_remote_media_is_sent_by_reference(uri, media_type, mime):
    (part,) = resolve_media(uri, media_type=media_type)
    assert (part.mime_type, part.uri, part.data) == (mime, uri, None)


def test_vertex_contents_json_from_the_gecko_sample():
    value = json.dumps({"contents": [{"parts": [{"file_data": {"mime_type": "image/png", "file_uri": "gs://b/obj"}}]}]})
    (part,) = resolve_media(value, media_type="image")
    assert (part.mime_type, part.uri) == ("image/png", "gs://b/obj")
    camel = {"contents": {"parts": [{"fileData": {"fileUri": "gs://b/v.mp4"}}]}}
    (part,) = resolve_media(camel, media_type="video")
    assert (part.mime_type, part.uri) == ("video/mp4", "gs://b/v.mp4")
    inline = {"contents": [{"parts": [{"inline_data": {"data": base64.b64encode(b"GIF89a....").decode()}}]}]}
    (part,) = resolve_media(json.dumps(inline), media_type="image")
    assert (part.mime_type, part.data) == ("image/gif", b"GIF89a....")


@pytest.mark.parametrize(
    ("value", "kind", "message"),
    [
        (None, "missing_media", "no media"),
        ("   ", "missing_media", "no media"),
        ("/does/not/exist.png", "unreadable_media", "cannot read media file '/does/not/exist.png'"),
        ("gs://bucket/no_extension", "unknown_media_type", "cannot tell the media type"),
        ("gs://bucket/clip.mp4", "media_type_mismatch", "is video/mp4 but media_type is 'image'"),
        ("{not json", "invalid_media_json", "not valid JSON"),
        ('{"contents": [{"parts": [{"text": "hi"}]}]}', "invalid_media_json", "no contents"),
        (42, "invalid_media_json", "must be a URI"),
    ],
)
def test_bad_media(value, kind, message):
    with pytest.raises(MediaError, match=message) as info:
        resolve_media(value, media_type="image")
    assert info.value.kind == kind


def test_unknown_local_content_and_empty_files(media_file):
    path = media_file("png", data=b"just some text", name="notes.txt")
    with pytest.raises(MediaError, match="unknown content and extension '.txt'") as info:
        resolve_media(str(path), media_type="image")
    assert info.value.kind == "unknown_media_type"
    empty = media_file("png", data=b"", name="empty.png")
    with pytest.raises(MediaError, match="is empty"):
        resolve_media(str(empty), media_type="image")


def test_sniff():
    assert sniff_mime_type(b"\x00\x00\x00\x18ftyp3gp5") == "video/3gpp"
    assert sniff_mime_type(b"hello") is None
