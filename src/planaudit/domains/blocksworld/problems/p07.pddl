;; Six-block tower whose bottom block must end up on top: the whole
;; tower is dismantled and rebuilt, although five of its six
;; on-facts are already true at the start.
;; Initial towers (top -> bottom): a b c d e f
(define (problem blocksworld-p07)
  (:domain blocksworld)
  (:objects a b c d e f - block)
  (:init
    (clear a)
    (on a b)
    (on b c)
    (on c d)
    (on d e)
    (on e f)
    (ontable f)
    (handempty))
  (:goal (and
    (on f a)
    (on a b)
    (on b c)
    (on c d)
    (on d e)
    (ontable e))))
