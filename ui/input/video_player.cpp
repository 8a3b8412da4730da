#include "ui/input/video_player.h"

#include <QFileInfo>
#include <QThread>

#include <new>
#include <utility>

#include "app/core/data/image_file.h"
#include "app/core/data/video_source.h"

namespace convscope::ui {

// What the reading thread hands the GUI thread: a frame, the end of the video, or an error; and
// after an open, the source with what its file says.
struct VideoPlayer::Decoded {
  std::shared_ptr<VideoSource> openedSource;
  std::optional<InputImage> frame;
  qint64 index = -1;
  QString error;
};

namespace {

// On the reading thread: the source's next frame as the window's input, inverted by the model's
// rule as an opened picture is, and named by its place in the video.
void decodeNext(VideoSource& source, const QString& name, PictureInversion inversion, VideoPlayer::Decoded& decoded) {
  std::optional<VideoFrame> frame = source.next();
  if (!frame) return;
  const DataSetPicture picture = invertedByRule(std::move(frame->picture), inversion);
  decoded.index = frame->index;
  decoded.frame = InputImage{picture.image, ImageSet::kNoLabel, -1,
                             VideoPlayer::tr("%1, frame %2").arg(name).arg(frame->index + 1), QString()};
}

}  // namespace

VideoPlayer::VideoPlayer(QObject* parent) : QObject(parent), thread_(new QThread(this)), reader_(new QObject) {
  thread_->setObjectName("video-reader");
  reader_->moveToThread(thread_);
  thread_->start();
}

VideoPlayer::~VideoPlayer() {
  ++generation_;
  thread_->quit();
  thread_->wait();  // the frame being decoded is finished, and its result dropped with this object
  delete reader_;
}

void VideoPlayer::openFile(const QString& path, int channels, PictureInversion inversion) {
  const std::string file = path.toStdString();
  start([file, channels] { return VideoSource::openFile(file, channels); }, QFileInfo(path).fileName(), false,
        inversion);
}

void VideoPlayer::openCamera(int index, int channels, PictureInversion inversion) {
  start([index, channels] { return VideoSource::openCamera(index, channels); }, tr("camera %1").arg(index), true,
        inversion);
}

void VideoPlayer::start(std::function<VideoSource()> open, const QString& name, bool camera,
                        PictureInversion inversion) {
  stop();
  const quint64 generation = ++generation_;
  source_.reset();
  name_ = name;
  camera_ = camera;
  inversion_ = inversion;
  frameCount_.reset();
  framesPerSecond_.reset();
  awaiting_.clear();
  lastFrameIndex_ = -1;
  classified_ = 0;
  playing_ = true;
  emit playingChanged(true);
  emit statusChanged(tr("Opening %1…").arg(name_));
  QMetaObject::invokeMethod(
      reader_,
      [this, generation, open = std::move(open), name, inversion] {
        auto decoded = std::make_shared<Decoded>();
        try {
          decoded->openedSource = std::make_shared<VideoSource>(open());
          decodeNext(*decoded->openedSource, name, inversion, *decoded);
        } catch (const std::bad_alloc&) {  // what() says only "std::bad_alloc"
          decoded->error = tr("%1: not enough memory to decode its first frame").arg(name);
        } catch (const std::exception& e) {
          decoded->error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, generation, decoded] { arrived(generation, decoded); }, Qt::QueuedConnection);
      },
      Qt::QueuedConnection);
}

void VideoPlayer::requestFrame() {
  const quint64 generation = generation_;
  QMetaObject::invokeMethod(
      reader_,
      [this, generation, source = source_, name = name_, inversion = inversion_] {
        auto decoded = std::make_shared<Decoded>();
        try {
          decodeNext(*source, name, inversion, *decoded);
        } catch (const std::bad_alloc&) {
          decoded->error = tr("%1: not enough memory to decode its next frame").arg(name);
        } catch (const std::exception& e) {
          decoded->error = QString::fromStdString(e.what());
        }
        QMetaObject::invokeMethod(
            this, [this, generation, decoded] { arrived(generation, decoded); }, Qt::QueuedConnection);
      },
      Qt::QueuedConnection);
}

void VideoPlayer::arrived(quint64 generation, const std::shared_ptr<Decoded>& decoded) {
  if (generation != generation_ || !playing_) return;  // stopped, or another video opened meanwhile
  if (!decoded->error.isEmpty()) {
    playing_ = false;
    source_.reset();
    emit playingChanged(false);
    emit failed(decoded->error);
    return;
  }
  if (decoded->openedSource) {
    source_ = decoded->openedSource;
    if (source_->frameCount()) frameCount_ = *source_->frameCount();
    framesPerSecond_ = source_->framesPerSecond();
    clock_.start();
    emit started(name_);
  }
  if (!decoded->frame) return end(tr("the end of the video"));
  lastFrameIndex_ = decoded->index;
  awaiting_ = decoded->frame->description;
  emit frameReady(*decoded->frame);
}

void VideoPlayer::frameClassified(const QString& description) {
  if (!playing_ || awaiting_.isEmpty() || description != awaiting_) return;
  awaiting_.clear();
  ++classified_;
  emit statusChanged(statusText());
  requestFrame();
}

void VideoPlayer::stop() {
  if (!playing_) return;
  end(tr("stopped"));
}

void VideoPlayer::end(const QString& why) {
  ++generation_;  // a frame still being decoded is dropped when it arrives
  playing_ = false;
  awaiting_.clear();
  source_.reset();  // the reading thread's copy, if any, goes with its read
  emit playingChanged(false);
  emit finished(tr("%1 (%2)").arg(statusText(), why));
}

double VideoPlayer::classifiedPerSecond() const {
  if (classified_ < 1 || !clock_.isValid()) return 0.0;
  const double seconds = static_cast<double>(clock_.nsecsElapsed()) / 1e9;
  return seconds > 0 ? classified_ / seconds : 0.0;
}

QString VideoPlayer::progressText() const {
  if (lastFrameIndex_ < 0) return tr("no frame yet");
  if (frameCount_) return tr("frame %1 of %2").arg(lastFrameIndex_ + 1).arg(*frameCount_);
  return tr("frame %1").arg(lastFrameIndex_ + 1);
}

QString VideoPlayer::statusText() const {
  const QString source = camera_ ? tr("Camera %1").arg(name_.section(' ', -1)) : tr("Video %1").arg(name_);
  return tr("%1: %2, %3 frames/s classified").arg(source, progressText()).arg(classifiedPerSecond(), 0, 'f', 1);
}

}  // namespace convscope::ui
